// Package drivertrace drives kube-scheduler's own scheduler driver (k8s.io/kubernetes v1.36:
// the Scheduler that scheduler.New builds, its ScheduleOne with the real scheduling and
// binding cycles, the real scheduling queue, cache, event handlers and informers) through a
// trace, and prints an observation after every step — the Go side of gangway's driver
// differential.
//
// The scheduler is built as kube-scheduler builds it, on a fake clientset
// (k8s.io/client-go/kubernetes/fake) with scheduler.NewInformerFactory's shared informers,
// with kube-scheduler 1.36's default feature gates and the gang ones on (GenericWorkload and
// GangScheduling, so the default profile has the GangScheduling plugin and a pod naming a
// scheduling group goes through the pod-group cycle, schedule_one_podgroup.go;
// SchedulerAsyncAPICalls off, SchedulerPopFromBackoffQ on) and one profile: the default
// configuration's (config/latest.Default()) with DefaultPreemption and DynamicResources
// disabled at PostFilter (gangway has neither preemption nor DRA) and
// two scripted Permit plugins, PermitA and PermitB (internal/scripted), enabled at Permit in
// that order through WithFrameworkOutOfTreeRegistry and WithProfiles. apiserver.go adds to
// the fake clientset what a real API server does and the scheduler relies on: resource
// versions on every write, and pods/binding.
//
// The harness is a test (drivertrace_test.go) so that it runs in a testing/synctest bubble:
// the informers, the scheduling queue's own loops (SchedulingQueue.Run: the backoff flush
// every second, the unschedulable leftover flush every 30 s), the binding cycles and the
// waiting pods' permit timers all run in the bubble on its fake clock, which moves only when
// a trace's advance_ms sleeps. After every step synctest.Wait lets the event handlers and
// binding goroutines settle before the observation. ScheduleOne is called only when its Pop
// would not block (a pod in the active queue, or in the backoff heap of rejected pods, which
// 1.36 pops when the active queue is empty); otherwise the step's error is "nothing to pop".
//
// A trace is JSON lines on stdin (blank lines and lines starting with # are skipped):
//
//	{"op":"node","node":"n1","cpu_milli":2000}
//	{"op":"group","group":"g","min_count":2}
//	{"op":"add","pod":"p1","cpu_milli":500,"priority":0}
//	{"op":"add","pod":"g-1","group":"g","cpu_milli":500}
//	{"op":"schedule_one","plugins":{"PermitA":{"code":"Wait","wait_ms":2000}}}
//	{"op":"fail_bind","pod":"p1"}
//	{"op":"delete","pod":"p1"}
//	{"op":"delete_node","node":"n1"}
//	{"op":"advance_ms","ms":1500}
//	{"op":"reject","pod":"p1","plugin":"PermitA","message":"m"}
//	{"op":"allow","pod":"p1","plugin":"PermitA"}
//	{"op":"hold_bind","pod":"p1"}
//	{"op":"release_bind","pod":"p1"}
//
// node creates a ready node (cpu as given, 64Gi memory, 110 pods); group a PodGroup
// (scheduling.k8s.io/v1alpha2, a gang of min_count, or Basic without one); add an unscheduled
// pod in namespace ns (UID its name, one container requesting the cpu, none for 0, naming the
// group in spec.schedulingGroup if one is given); schedule_one
// runs one ScheduleOne, the scripts (code Success, Wait, Unschedulable,
// UnschedulableAndUnresolvable or Error, a message, a wait) answering in its scheduling cycle
// only, an unscripted plugin allowing; fail_bind makes the pod's next binding fail with an
// API error; reject and allow act on the framework's waiting pod; hold_bind stops the pod's
// binding cycles at PreBind (HoldBind, holdbind.go) until release_bind lets the held one go on
// to its bind.
//
// Each observation is one JSON line: the step and op, the pod ScheduleOne popped, the place
// of every pod added ("active", "backoff", "error_backoff", "unschedulable", "gated",
// "in_flight" as the queue says, in that precedence; else "bound" if the informer's pod is
// assigned; else "binding" if the cache has it assumed; else "absent"), the waiting pods and their pending plugins, the node of every
// assigned pod, the PodScheduled condition (status, reason, message) of each pod whose
// condition on the API server changed in the step, the PodGroupScheduled condition of each
// PodGroup whose condition changed (group_conditions), whether a reject decided, and an error.
//
// The fake clock does not move within a step nor between steps without advance_ms, so pods
// requeued in the same instant tie in the queues' orderings (same backoff window, priority
// and timestamp) and, when two goroutines requeue them (an informer event and a binding
// cycle), their pop order is not deterministic: a trace separates them with an advance_ms or
// priorities.
//
// Build it as a test binary and give it the trace on stdin (observations on stdout, the
// test's and klog's output on stderr):
//
//	go test -c -o ../target/drivertrace ./cmd/drivertrace
//	../target/drivertrace -test.run TestTrace < traces/driver_fit_bind.jsonl
package drivertrace
