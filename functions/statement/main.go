// Command statement reads the app table's DynamoDB stream and its replay queue, and writes each
// change of an account's balance as a statement line exactly once, in order.
package main

import (
	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
)

func main() { app.Start("statement", config.LoadConsumer, app.NewStatement) }
