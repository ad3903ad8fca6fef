// Package fault puts faults between a component under test and the real emulators it talks
// to: a proxy that answers chosen calls as AWS answers a role that lacks the permission
// (DenyProxy, recording every call as IAM would authorise it), a proxy that adds latency to
// every round trip (LatencyProxy), and SDK middleware that throttles the first attempts of an
// operation (ThrottleFirst, ThrottleFirstWrites) or writes as a concurrent writer before a
// commit (RaceCommits). The component keeps its real clients; only the fault is played.
package fault
