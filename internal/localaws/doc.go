// Package localaws holds what local runs of the functions share with the tests of the engine
// and the application: the fixed local identity, the events Lambda's event source mappings
// deliver (built from SQS and DynamoDB Streams reads), and a Parameter Store stand-in. The
// local cloud (infra/localcloud) builds on it; nothing here starts an emulator.
package localaws
