// Command localcloud runs the application of template.yaml on local emulators (see package
// infra/localcloud):
//
//	localcloud up [-template template.yaml] [-state .local] [-envs Fn=3,Other=1] [-prefix p]
//	localcloud run [up flags] [-notes 200] [-movements 1000] [-accounts 50] [-keep]
//	localcloud down [-state .local]
//	localcloud invoke [-state .local] FUNCTION EVENT.json|-
//	localcloud logs [-state .local] [-f] FUNCTION
//	localcloud scan [-state .local] [-limit 50] [TABLE]
//	localcloud queue [-state .local] [QUEUE]
//
// up starts a supervisor process (localcloud serve) in its own session and returns when the
// cloud is ready and .local/endpoints.json is written; down stops exactly what up started.
// run starts the cloud in the foreground with a loopback webhook receiver and a crash after
// commit, drives the demo workload of package infra/workload through it, prints the summary
// and the invariants, and stops it (with -keep, on SIGINT, SIGTERM or `make down`); it exits
// non-zero when an invariant fails. logs prints a function's log lines (every environment,
// in time order, without the emulator's own lines), and with -f follows them. scan prints a
// table's items (JSON lines), queue a queue's messages without receiving them; without a name
// each lists every table or queue of the running cloud with its counts.
package main
