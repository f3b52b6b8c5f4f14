package gangtrace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gangway-rs/gangway/upstream/internal/jsonlines"
	"github.com/gangway-rs/gangway/upstream/internal/realgang"
	v1 "k8s.io/api/core/v1"
	schedulingapi "k8s.io/api/scheduling/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// Op is one line of a trace.
type Op struct {
	Op       string `json:"op"`
	Pod      string `json:"pod,omitempty"`
	Group    string `json:"group,omitempty"`
	MinCount *int32 `json:"min_count,omitempty"`
	Priority int32  `json:"priority,omitempty"`
	Node     string `json:"node,omitempty"`
	Plugin   string `json:"plugin,omitempty"`
	Message  string `json:"message,omitempty"`
	Ms       int64  `json:"ms,omitempty"`
	Hold     bool   `json:"hold,omitempty"`
	// Plugins scripts the Permit plugins besides the gang's for a schedule op.
	Plugins map[string]Script `json:"plugins,omitempty"`
}

// Status is a framework status as observed: nil is Success.
type Status struct {
	Code    string `json:"code"`
	Plugin  string `json:"plugin"`
	Message string `json:"message"`
}

// Counts is a pod group state's partition, as the cache keeps it.
type Counts struct {
	All         int `json:"all"`
	Scheduled   int `json:"scheduled"`
	Assumed     int `json:"assumed"`
	Assigned    int `json:"assigned"`
	Unscheduled int `json:"unscheduled"`
}

// Observation is what the harness prints after each step.
type Observation struct {
	Step         int                 `json:"step"`
	Op           string              `json:"op"`
	PreEnqueue   *Status             `json:"pre_enqueue,omitempty"`
	Permit       *Status             `json:"permit,omitempty"`
	PermitWaits  map[string]int64    `json:"permit_waits,omitempty"`
	WaitOnPermit map[string]Status   `json:"wait_on_permit,omitempty"`
	Decided      *bool               `json:"decided,omitempty"`
	Waiting      map[string][]string `json:"waiting,omitempty"`
	Groups       map[string]Counts   `json:"groups,omitempty"`
	Activated    []string            `json:"activated,omitempty"`
	Error        string              `json:"error,omitempty"`
}

const namespace = "ns"

func observe(s *fwk.Status) *Status {
	if s == nil {
		return &Status{Code: fwk.Success.String()}
	}
	return &Status{Code: s.Code().String(), Plugin: s.Plugin(), Message: s.Message()}
}

// activator records what the framework's Activate is given (the scheduling queue would move
// those pods to the active queue).
type activator struct {
	mu    sync.Mutex
	names map[string]bool
}

func (a *activator) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for name := range pods {
		a.names[name] = true
	}
}

func (a *activator) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	names := make([]string, 0, len(a.names))
	for name := range a.names {
		names = append(names, name)
	}
	sort.Strings(names)
	a.names = map[string]bool{}
	return names
}

type harness struct {
	ctx       context.Context
	logger    klog.Logger
	cache     internalcache.Cache
	fh        framework.Framework
	groups    cache.Store
	activator *activator

	// The informer's pods (the latest object of each), the assumed copies the scheduling
	// cycles made, the pods whose WaitOnPermit passed, and the group names the trace used.
	pods       map[string]*v1.Pod
	assumed    map[string]*v1.Pod
	passed     map[string]bool
	groupNames map[string]bool

	// What the binding cycles' goroutines report, taken by settle once they are idle.
	mu        sync.Mutex
	waitedFor map[string]Status

	// The binding cycles a trace holds after a failed wait (schedule's hold): each waits on
	// its channel, closed by the pod's release, before it unreserves and forgets.
	held         map[string]chan struct{}
	rejectedHeld map[string]bool

	// What the scripted Permit plugins answer in the schedule op being applied.
	script *map[string]Script
}

func newHarness(ctx context.Context) (*harness, error) {
	logger := klog.FromContext(ctx)
	act := &activator{names: map[string]bool{}}
	script := &map[string]Script{}
	opts := realgang.Options{Activator: act, PreEnqueue: true}
	for _, name := range scriptedPlugins {
		opts.Permit = append(opts.Permit, realgang.NamedPlugin{Name: name, Factory: scriptedFactory(name, script)})
	}
	parts, err := realgang.New(ctx, opts)
	if err != nil {
		return nil, err
	}
	c, fh, groups := parts.Cache, parts.Framework, parts.PodGroups
	return &harness{
		ctx: ctx, logger: logger, cache: c, fh: fh, groups: groups, activator: act,
		pods: map[string]*v1.Pod{}, assumed: map[string]*v1.Pod{}, passed: map[string]bool{},
		groupNames: map[string]bool{}, waitedFor: map[string]Status{}, held: map[string]chan struct{}{}, rejectedHeld: map[string]bool{},
		script: script,
	}, nil
}

// bindingCycle is the part of kube-scheduler's binding cycle (schedule_one.go bindingCycle,
// handleBindingCycleError) this harness observes: WaitOnPermit, and on a failure the
// Unreserve plugins and the cache's ForgetPod. Binding itself is the trace's bind op.
func (h *harness) bindingCycle(name string, state fwk.CycleState, assumed *v1.Pod, hold chan struct{}) {
	s := h.fh.WaitOnPermit(h.ctx, assumed)
	h.mu.Lock()
	h.waitedFor[name] = *observe(s)
	h.mu.Unlock()
	if !s.IsSuccess() {
		if hold != nil {
			<-hold // a durable block in the bubble: the step settles without it
		}
		h.unreserveAndForget(state, assumed)
	}
}

func (h *harness) unreserveAndForget(state fwk.CycleState, assumed *v1.Pod) {
	h.fh.RunReservePluginsUnreserve(h.ctx, state, assumed, assumed.Spec.NodeName)
	_ = h.cache.ForgetPod(h.logger, assumed)
}

func (h *harness) apply(op Op, obs *Observation) error {
	switch op.Op {
	case "group":
		h.groupNames[op.Group] = true
		pg := &schedulingapi.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: op.Group, Namespace: namespace}}
		if op.MinCount != nil {
			pg.Spec.SchedulingPolicy.Gang = &schedulingapi.GangSchedulingPolicy{MinCount: *op.MinCount}
		} else {
			pg.Spec.SchedulingPolicy.Basic = &schedulingapi.BasicSchedulingPolicy{}
		}
		return h.groups.Add(pg)
	case "add":
		if _, ok := h.pods[op.Pod]; ok {
			return fmt.Errorf("pod %s exists", op.Pod)
		}
		priority := op.Priority
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: op.Pod, Namespace: namespace, UID: types.UID(op.Pod)},
			Spec:       v1.PodSpec{Priority: &priority},
		}
		if op.Group != "" {
			h.groupNames[op.Group] = true
			group := op.Group
			p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
		}
		h.pods[op.Pod] = p
		// As the event handler does for an unscheduled pod (addPodToSchedulingQueue).
		h.cache.AddPodGroupMember(p)
	case "pre_enqueue":
		p, ok := h.pods[op.Pod]
		if !ok {
			return fmt.Errorf("pod %s is unknown", op.Pod)
		}
		obs.PreEnqueue = observe(nil)
		// As the scheduling queue runs them: the first that does not pass, named.
		for _, pl := range h.fh.PreEnqueuePlugins() {
			if s := pl.PreEnqueue(h.ctx, p); !s.IsSuccess() {
				obs.PreEnqueue = observe(s.WithPlugin(pl.Name()))
				break
			}
		}
	case "schedule":
		p, ok := h.pods[op.Pod]
		if !ok {
			return fmt.Errorf("pod %s is unknown", op.Pod)
		}
		if _, busy := h.assumed[op.Pod]; busy || p.Spec.NodeName != "" {
			return fmt.Errorf("pod %s is assumed or bound", op.Pod)
		}
		if err := validScripts(op.Plugins); err != nil {
			return err
		}
		node := op.Node
		if node == "" {
			node = "node"
		}
		// schedule_one.go: assumeAndReserve, then RunPermitPlugins; a Wait registers the
		// waiting pod before the binding cycle starts; a rejection unreserves and forgets.
		state := framework.NewCycleState()
		assumed := p.DeepCopy()
		assumed.Spec.NodeName = node
		if err := h.cache.AssumePod(h.logger, assumed); err != nil {
			return err
		}
		if s := h.fh.RunReservePluginsReserve(h.ctx, state, assumed, node); !s.IsSuccess() {
			h.unreserveAndForget(state, assumed)
			obs.Permit = observe(s)
			return nil
		}
		*h.script = op.Plugins
		waits, s := h.fh.RunPermitPlugins(h.ctx, state, assumed, node)
		*h.script = nil
		obs.Permit = observe(s)
		if len(waits) > 0 {
			obs.PermitWaits = map[string]int64{}
			for plugin, d := range waits {
				obs.PermitWaits[plugin] = d.Milliseconds()
			}
		}
		if !s.IsSuccess() && !s.IsWait() {
			h.unreserveAndForget(state, assumed)
			return nil
		}
		if s.IsWait() {
			h.fh.AddWaitingPod(assumed, waits)
		}
		h.assumed[op.Pod] = assumed
		delete(h.passed, op.Pod)
		var hold chan struct{}
		if op.Hold {
			hold = make(chan struct{})
			h.held[op.Pod] = hold
		}
		go h.bindingCycle(op.Pod, state, assumed, hold)
	case "release":
		if hold, ok := h.held[op.Pod]; ok {
			delete(h.held, op.Pod)
			if h.rejectedHeld[op.Pod] {
				delete(h.rejectedHeld, op.Pod)
				delete(h.assumed, op.Pod) // its binding cycle unreserves and forgets it now
			}
			close(hold)
		}
	case "allow", "reject", "preempt":
		wp := h.fh.GetWaitingPod(types.UID(op.Pod))
		if op.Op == "allow" {
			if wp != nil {
				wp.Allow(op.Plugin)
			}
			return nil
		}
		decided := false
		if wp != nil && op.Op == "reject" {
			decided = wp.Reject(op.Plugin, op.Message)
		} else if wp != nil {
			decided = wp.Preempt(op.Plugin, op.Message)
		}
		obs.Decided = &decided
	case "bind":
		assumed, ok := h.assumed[op.Pod]
		if !ok || !h.passed[op.Pod] {
			return fmt.Errorf("pod %s has not passed permit", op.Pod)
		}
		// The binding reached the API server; the informer's update (unassigned to assigned)
		// reaches the event handler, which adds the assigned pod to the cache
		// (addAssignedPodToCache) and drops it from the scheduling queue.
		bound := h.pods[op.Pod].DeepCopy()
		bound.Spec.NodeName = assumed.Spec.NodeName
		h.pods[op.Pod] = bound
		delete(h.assumed, op.Pod)
		return h.cache.AddPod(h.logger, bound)
	case "forget":
		assumed, ok := h.assumed[op.Pod]
		if !ok || !h.passed[op.Pod] {
			return fmt.Errorf("pod %s has not passed permit", op.Pod)
		}
		// The binding cycle failed after Permit (PreBind or Bind): handleBindingCycleError.
		delete(h.assumed, op.Pod)
		delete(h.passed, op.Pod)
		h.unreserveAndForget(framework.NewCycleState(), assumed)
	case "delete":
		p, ok := h.pods[op.Pod]
		if !ok {
			return fmt.Errorf("pod %s is unknown", op.Pod)
		}
		delete(h.pods, op.Pod)
		delete(h.assumed, op.Pod)
		delete(h.passed, op.Pod)
		// The event handler's deletePod: an assigned pod leaves the cache; an unscheduled one
		// leaves the queue and its pod group state, and if it was assumed
		// (handleAssumedPodDeletion) its waiting pod is rejected, or else it is forgotten.
		if p.Spec.NodeName != "" {
			return h.cache.RemovePod(h.logger, p)
		}
		h.cache.RemovePodGroupMember(p)
		if isAssumed, _ := h.cache.IsAssumedPod(p); isAssumed {
			cached, err := h.cache.GetPod(p)
			if err != nil {
				return nil
			}
			if !h.fh.RejectWaitingPod(cached.UID) {
				_ = h.cache.ForgetPod(h.logger, cached)
			}
		}
	case "advance_ms":
		time.Sleep(time.Duration(op.Ms) * time.Millisecond)
	default:
		return fmt.Errorf("unknown op %q", op.Op)
	}
	return nil
}

// settle fills in what the step left: the binding cycles that returned from WaitOnPermit,
// the waiting pods, the groups' counts and the activations.
func (h *harness) settle(obs *Observation) {
	h.mu.Lock()
	if len(h.waitedFor) > 0 {
		obs.WaitOnPermit = h.waitedFor
		h.waitedFor = map[string]Status{}
	}
	h.mu.Unlock()
	for name, s := range obs.WaitOnPermit {
		if s.Code == fwk.Success.String() {
			h.passed[name] = true
		} else if _, held := h.held[name]; held {
			h.rejectedHeld[name] = true // still reserved until its release
		} else {
			delete(h.assumed, name) // unreserved and forgotten by its binding cycle
		}
	}
	h.fh.IterateOverWaitingPods(func(wp fwk.WaitingPod) {
		if obs.Waiting == nil {
			obs.Waiting = map[string][]string{}
		}
		plugins := wp.GetPendingPlugins()
		sort.Strings(plugins)
		obs.Waiting[wp.GetPod().Name] = plugins
	})
	for name := range h.groupNames {
		state, err := h.cache.PodGroupStates().Get(namespace, name)
		if err != nil {
			continue // no pod of the group is known
		}
		if obs.Groups == nil {
			obs.Groups = map[string]Counts{}
		}
		obs.Groups[name] = Counts{
			All:         state.AllPodsCount(),
			Scheduled:   state.ScheduledPodsCount(),
			Assumed:     state.AssumedPods().Len(),
			Assigned:    state.AssignedPods().Len(),
			Unscheduled: len(state.UnscheduledPods()),
		}
	}
	obs.Activated = h.activator.take()
}

// The observations go to the process's stdout; the testing package's own output goes to
// stderr.
var out = os.Stdout

func TestMain(m *testing.M) {
	os.Stdout = os.Stderr
	metrics.Register()
	// HandleError's second handler rate-limits errors against a time taken at package init,
	// outside the bubble: inside it (the year 2000) that sleeps for decades with the cache's
	// lock held. Errors are only logged.
	utilruntime.ErrorHandlers = utilruntime.ErrorHandlers[:1]
	if err := realgang.EnableGangGates(); err != nil {
		fmt.Fprintln(os.Stderr, "gangtrace:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

func TestTrace(t *testing.T) {
	ops, err := jsonlines.Read[Op](os.Stdin)
	if err != nil {
		t.Fatalf("gangtrace: %v", err)
	}
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background()))
		h, err := newHarness(ctx)
		if err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(out)
		for i, op := range ops {
			obs := Observation{Step: i + 1, Op: op.Op}
			if err := h.apply(op, &obs); err != nil {
				obs.Error = err.Error()
			}
			synctest.Wait()
			h.settle(&obs)
			if err := enc.Encode(obs); err != nil {
				t.Fatal(err)
			}
		}
		// Every binding cycle still waiting ends, and the background goroutines stop, so
		// the bubble empties.
		h.fh.IterateOverWaitingPods(func(wp fwk.WaitingPod) { wp.Reject("", "end of trace") })
		synctest.Wait()
		cancel()
		// The framework's metrics recorder looks at its stop channel once a second.
		time.Sleep(2 * time.Second)
	})
}
