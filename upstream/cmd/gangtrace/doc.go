// Package gangtrace drives kube-scheduler's own gang scheduling code (k8s.io/kubernetes
// v1.36: the scheduler cache as the PodGroupManager, the framework runtime with the real
// GangScheduling plugin at PreEnqueue and Permit, the real waiting-pods map and WaitOnPermit)
// through a trace, and prints an observation after every step — the Go side of gangway's gang
// differential (upstream/README.md).
//
// The harness is a test (gangtrace_test.go) so that it runs in a testing/synctest bubble: the
// waiting pods' time.AfterFunc timers run on the bubble's fake clock, advance_ms is a
// time.Sleep that returns at once in real time, and synctest.Wait after every step lets the
// binding cycles' WaitOnPermit goroutines settle before the observation. Build it as a test
// binary and give it the trace on stdin:
//
//	go test -c -o ../target/gangtrace ./cmd/gangtrace
//	../target/gangtrace < traces/gang_quorum.jsonl
package gangtrace
