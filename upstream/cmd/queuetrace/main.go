// Command queuetrace drives kube-scheduler's own scheduling queue
// (k8s.io/kubernetes/pkg/scheduler/backend/queue, v1.36, default feature gates) through a trace
// and prints an observation after every step — the Go side of gangway's differential
// (upstream/README.md). Time is a fake clock that only the trace moves; the queue's periodic
// flushes run only when the trace says so.
//
// A trace is JSON lines on stdin, one operation each:
//
//	{"op":"add","pod":"a","priority":0}
//	{"op":"add","pod":"m","group":"g"}
//	{"op":"update","pod":"a","priority":5}
//	{"op":"pop"}
//	{"op":"unschedulable","pod":"a","plugins":["NodeResourcesFit"]}
//	{"op":"error","pod":"a"}
//	{"op":"done","pod":"a"}
//	{"op":"move_all","event":"NodeAdd"}
//	{"op":"activate","pods":["a"]}
//	{"op":"delete","pod":"a"}
//	{"op":"advance_ms","ms":1000}
//	{"op":"flush_backoff"}
//	{"op":"flush_leftover"}
//	{"op":"close"}
//
// and, for the conformance table's traces (upstream/README.md):
//
//	{"op":"config","profile":"conformance",   (or "lockstep": lockstep.go)"initial_backoff_ms":1000,"max_backoff_ms":10000,
//	 "max_in_unschedulable_ms":300000,"pop_from_backoff":false}   (first, if at all)
//	{"op":"unschedulable","pod":"a","plugins":["Fit"],"pending":["Pending"]}
//	{"op":"move_all","event":"NodeAdd","node":"big","precheck":"min_priority","min":2}
//	{"op":"move_all","event":"UnscheduledPodUpdate","pod":"other","priority":1,"exclude":"a"}
//	{"op":"gate","open":true}
//	{"op":"advance_ns","ns":1}
//
// Each observation is one JSON line: the step, the operation, the pod a pop returned, and the
// place of every pod the trace named ("active", "backoff", "error_backoff", "unschedulable",
// "gated" (in the unschedulable pool, gated by a PreEnqueue plugin), "in_flight", or
// "absent").
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"time"
	_ "unsafe" // for go:linkname

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	testingclock "k8s.io/utils/clock/testing"
)

// The queue's periodic flushes are unexported; Run would drive them on real time. The
// harness calls them when the trace says (build with -ldflags=-checklinkname=0).
//
//go:linkname flushBackoffQCompleted k8s.io/kubernetes/pkg/scheduler/backend/queue.(*PriorityQueue).flushBackoffQCompleted
func flushBackoffQCompleted(p *queue.PriorityQueue, logger klog.Logger)

//go:linkname flushUnschedulablePodsLeftover k8s.io/kubernetes/pkg/scheduler/backend/queue.(*PriorityQueue).flushUnschedulablePodsLeftover
func flushUnschedulablePodsLeftover(p *queue.PriorityQueue, logger klog.Logger)

// Op is one line of a trace.
type Op struct {
	Op       string   `json:"op"`
	Pod      string   `json:"pod,omitempty"`
	Pods     []string `json:"pods,omitempty"`
	Priority int32    `json:"priority,omitempty"`
	Group    string   `json:"group,omitempty"`
	Plugins  []string `json:"plugins,omitempty"`
	Event    string   `json:"event,omitempty"`
	Ms       int64    `json:"ms,omitempty"`
	Ns       int64    `json:"ns,omitempty"`
	Pending  []string `json:"pending,omitempty"`
	Node     string   `json:"node,omitempty"`
	Precheck string   `json:"precheck,omitempty"`
	Exclude  string   `json:"exclude,omitempty"`
	Min      int32    `json:"min,omitempty"`
	Open     bool     `json:"open,omitempty"`
	// The config op's fields (0 / absent: kube-scheduler's default). A trace's
	// wildcards_move_gated is gangway's alone (kubernetes#139162, not in v1.36.3): ignored, the
	// real code runs as it is.
	Profile              string `json:"profile,omitempty"`
	InitialBackoffMs     int64  `json:"initial_backoff_ms,omitempty"`
	GangGates            *bool  `json:"gang_gates,omitempty"`
	MaxBackoffMs         int64  `json:"max_backoff_ms,omitempty"`
	MaxInUnschedulableMs int64  `json:"max_in_unschedulable_ms,omitempty"`
	PopFromBackoff       *bool  `json:"pop_from_backoff,omitempty"`
}

// Observation is what the harness prints after each step.
type Observation struct {
	Step   int               `json:"step"`
	Op     string            `json:"op"`
	Popped *string           `json:"popped,omitempty"`
	Places map[string]string `json:"places"`
	Error  string            `json:"error,omitempty"`
}

type harness struct {
	logger         klog.Logger
	popFromBackoff bool
	open           *bool
	clock          *testingclock.FakeClock
	q              *queue.PriorityQueue
	pods           map[string]*v1.Pod
	names          []string
	popped         map[string]*framework.QueuedPodInfo
	cycles         map[string]int64
	created        time.Time
}

// newHarness builds the queue a config op asks for (nil: the default profile, 1.36's
// defaults). The SchedulerPopFromBackoffQ gate (Beta, on by default in 1.36) brings both pop
// from backoff and the 1 s ordering window; it is set before the queue reads it.
func newHarness(config *Op) (*harness, error) {
	if config == nil {
		config = &Op{}
	}
	popFromBackoff := config.PopFromBackoff == nil || *config.PopFromBackoff
	if err := utilfeature.DefaultMutableFeatureGate.Set(fmt.Sprintf("SchedulerPopFromBackoffQ=%t", popFromBackoff)); err != nil {
		return nil, err
	}
	// The gang gates (alpha, off by default; gangway schedules gangs, so on unless the trace
	// says off). In the queue they change one rule: a pod naming a group backs off after any
	// failure (determineSchedulingHintForInFlightPod).
	gangGates := config.GangGates == nil || *config.GangGates
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{
		string(features.GenericWorkload): gangGates,
		string(features.GangScheduling):  gangGates,
	}); err != nil {
		return nil, err
	}
	// The queue records metrics on every move; they must exist (as kube-scheduler registers
	// them at start).
	metrics.Register()
	start := time.Unix(0, 0).UTC()
	clock := testingclock.NewFakeClock(start)
	less := (&queuesort.PrioritySort{}).Less
	open := false
	options, err := profile(config.Profile, &open)
	if err != nil {
		return nil, err
	}
	options = append(options, queue.WithClock(clock))
	ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
	if config.InitialBackoffMs != 0 {
		options = append(options, queue.WithPodInitialBackoffDuration(ms(config.InitialBackoffMs)))
	}
	if config.MaxBackoffMs != 0 {
		options = append(options, queue.WithPodMaxBackoffDuration(ms(config.MaxBackoffMs)))
	}
	if config.MaxInUnschedulableMs != 0 {
		options = append(options, queue.WithPodMaxInUnschedulablePodsDuration(ms(config.MaxInUnschedulableMs)))
	}
	q := queue.NewTestQueue(context.Background(), less, options...)
	return &harness{
		logger: klog.Background(), popFromBackoff: popFromBackoff, open: &open, clock: clock, q: q,
		pods: map[string]*v1.Pod{}, popped: map[string]*framework.QueuedPodInfo{},
		cycles: map[string]int64{}, created: start,
	}, nil
}

func (h *harness) pod(name string, priority int32, group string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "ns", UID: types.UID(name),
			CreationTimestamp: metav1.NewTime(h.created),
		},
		Spec: v1.PodSpec{Priority: &priority},
	}
	if group != "" {
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
	}
	if _, seen := h.pods[name]; !seen {
		h.names = append(h.names, name)
	}
	h.pods[name] = p
	return p
}

func (h *harness) apply(op Op) (*string, error) {
	ctx := context.Background()
	switch op.Op {
	case "add":
		h.q.Add(ctx, h.pod(op.Pod, op.Priority, op.Group))
	case "update":
		// A pod the queue does not know is added by Update (as gangway's update adds it).
		old, ok := h.pods[op.Pod]
		if !ok {
			var zero int32
			old = &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: op.Pod, Namespace: "ns", UID: types.UID(op.Pod),
					CreationTimestamp: metav1.NewTime(h.created)},
				Spec: v1.PodSpec{Priority: &zero},
			}
		}
		group := "" // immutable: the pod keeps its group
		if old.Spec.SchedulingGroup != nil {
			group = *old.Spec.SchedulingGroup.PodGroupName
		}
		h.q.Update(ctx, old, h.pod(op.Pod, op.Priority, group))
	case "pop":
		// Pop blocks on an empty active queue unless a pod backs off for a rejection (1.36
		// pops those early, SchedulerPopFromBackoffQ); a pod in the error backoff is never
		// popped early.
		places := h.places()
		poppable := false
		for _, place := range places {
			poppable = poppable || place == "active" || (h.popFromBackoff && place == "backoff")
		}
		if !poppable {
			return nil, nil
		}
		cycle := h.q.SchedulingCycle()
		pInfo, err := h.q.Pop(h.logger)
		if err != nil || pInfo == nil {
			return nil, err
		}
		name := pInfo.Pod.Name
		h.popped[name] = pInfo
		h.cycles[name] = cycle
		return &name, nil
	case "unschedulable", "error":
		pInfo, ok := h.popped[op.Pod]
		if !ok {
			return nil, fmt.Errorf("pod %s is not in flight", op.Pod)
		}
		delete(h.popped, op.Pod)
		// As the scheduler's failure handler does (handleSchedulingFailure in schedule_one.go):
		// a pod gone from the informer's cache is not requeued, only done; otherwise it goes
		// back as the cache has it now, its latest object.
		latest, exists := h.pods[op.Pod]
		if !exists {
			h.q.Done(pInfo.Pod.UID)
			return nil, nil
		}
		podInfo, err := framework.NewPodInfo(latest.DeepCopy())
		if err != nil {
			return nil, err
		}
		pInfo.PodInfo = podInfo
		pInfo.UnschedulablePlugins = sets.New(op.Plugins...)
		pInfo.PendingPlugins = sets.New(op.Pending...)
		return nil, h.q.AddUnschedulableIfNotPresent(h.logger, pInfo, h.cycles[op.Pod])
	case "done":
		delete(h.popped, op.Pod)
		h.q.Done(types.UID(op.Pod))
	case "move_all":
		event, ok := events[op.Event]
		if !ok {
			return nil, fmt.Errorf("unknown event %q", op.Event)
		}
		var called string
		check, err := precheck(op.Precheck, op.Min, op.Exclude, &called)
		if err != nil {
			return nil, err
		}
		oldObj, newObj := eventObjects(op.Event, op.Node, op.Pod, op.Priority)
		h.q.MoveAllToActiveOrBackoffQueue(h.logger, event, oldObj, newObj, check)
		if called != "" {
			return nil, errors.New(called)
		}
	case "gate":
		*h.open = op.Open
	case "activate":
		pods := map[string]*v1.Pod{}
		for _, name := range op.Pods {
			if p, ok := h.pods[name]; ok {
				pods[name] = p
			}
		}
		h.q.Activate(h.logger, pods)
	case "delete":
		if p, ok := h.pods[op.Pod]; ok {
			h.q.Delete(p)
			delete(h.pods, op.Pod) // gone from the informer's cache too
		}
	case "advance_ms":
		h.clock.Step(time.Duration(op.Ms) * time.Millisecond)
	case "advance_ns":
		h.clock.Step(time.Duration(op.Ns))
	case "flush_backoff":
		flushBackoffQCompleted(h.q, h.logger)
	case "flush_leftover":
		flushUnschedulablePodsLeftover(h.q, h.logger)
	case "close":
		h.q.Close()
	default:
		return nil, fmt.Errorf("unknown op %q", op.Op)
	}
	return nil, nil
}

func (h *harness) places() map[string]string {
	places := map[string]string{}
	for _, name := range h.names {
		places[name] = "absent"
	}
	mark := func(pods []*v1.Pod, place string) {
		for _, p := range pods {
			places[p.Name] = place
		}
	}
	mark(h.q.PodsInActiveQ(), "active")
	// PodsInBackoffQ lists both backoff heaps; a pod rejected by no plugin is in the error
	// heap (the rule backoffQueue.add routes by).
	for _, p := range h.q.PodsInBackoffQ() {
		places[p.Name] = "backoff"
		if pInfo, ok := h.q.GetPod(p.Name, p.Namespace); ok &&
			pInfo.UnschedulablePlugins.Len() == 0 && pInfo.PendingPlugins.Len() == 0 {
			places[p.Name] = "error_backoff"
		}
	}
	// A pod in the unschedulable pool that a PreEnqueue plugin gates (upstream's Gated()).
	for _, p := range h.q.UnschedulablePods() {
		places[p.Name] = "unschedulable"
		if pInfo, ok := h.q.GetPod(p.Name, p.Namespace); ok && pInfo.Gated() {
			places[p.Name] = "gated"
		}
	}
	mark(h.q.InFlightPods(), "in_flight")
	return places
}

func main() {
	var h *harness
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	step := 0
	for in.Scan() {
		line := in.Bytes()
		if len(line) == 0 {
			continue
		}
		var op Op
		if err := json.Unmarshal(line, &op); err != nil {
			fmt.Fprintf(os.Stderr, "queuetrace: line %d: %v\n", step+1, err)
			os.Exit(2)
		}
		step++
		if op.Op == "config" || h == nil {
			var config *Op
			if op.Op == "config" {
				if h != nil {
					fmt.Fprintf(os.Stderr, "queuetrace: line %d: config must come first\n", step)
					os.Exit(2)
				}
				config = &op
			}
			var err error
			if h, err = newHarness(config); err != nil {
				fmt.Fprintf(os.Stderr, "queuetrace: line %d: %v\n", step, err)
				os.Exit(2)
			}
			if op.Op == "config" {
				_ = out.Encode(Observation{Step: step, Op: op.Op, Places: h.places()})
				continue
			}
		}
		popped, err := h.apply(op)
		obs := Observation{Step: step, Op: op.Op, Popped: popped, Places: h.places()}
		if err != nil {
			obs.Error = err.Error()
		}
		_ = out.Encode(obs)
	}

}
