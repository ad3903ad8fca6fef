// Package logging builds the JSON slog logger the functions use, which adds the Lambda request
// id from the context to every record logged with a context.
package logging
