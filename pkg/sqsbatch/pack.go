package sqsbatch

import "github.com/onceflow/onceflow/pkg/batch"

// PackWidth is how many groups a packing Processor runs at once when Concurrency is lower:
// the messages of one SQS FIFO batch (at most 10) then share one transaction.
const PackWidth = batch.PackWidth
