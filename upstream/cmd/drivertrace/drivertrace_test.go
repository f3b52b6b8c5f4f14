package drivertrace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gangway-rs/gangway/upstream/internal/jsonlines"
	"github.com/gangway-rs/gangway/upstream/internal/realgang"
	"github.com/gangway-rs/gangway/upstream/internal/scripted"
	v1 "k8s.io/api/core/v1"
	schedulingapi "k8s.io/api/scheduling/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// Op is one line of a trace.
type Op struct {
	Op       string `json:"op"`
	Pod      string `json:"pod,omitempty"`
	Group    string `json:"group,omitempty"`
	MinCount *int32 `json:"min_count,omitempty"`
	Node     string `json:"node,omitempty"`
	CPUMilli int64  `json:"cpu_milli,omitempty"`
	Priority int32  `json:"priority,omitempty"`
	Plugin   string `json:"plugin,omitempty"`
	Message  string `json:"message,omitempty"`
	Ms       int64  `json:"ms,omitempty"`
	// Plugins scripts the Permit plugins for a schedule_one op's scheduling cycle.
	Plugins map[string]scripted.Script `json:"plugins,omitempty"`
}

// Condition is a pod's PodScheduled condition as the API server holds it.
type Condition struct {
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Observation is what the harness prints after each step.
type Observation struct {
	Step       int                  `json:"step"`
	Op         string               `json:"op"`
	Popped     string               `json:"popped,omitempty"`
	Places     map[string]string    `json:"places,omitempty"`
	Waiting    map[string][]string  `json:"waiting,omitempty"`
	Nodes      map[string]string    `json:"nodes,omitempty"`
	Conditions map[string]Condition `json:"conditions,omitempty"`
	// GroupConditions are the PodGroupScheduled conditions that changed in the step.
	GroupConditions map[string]Condition `json:"group_conditions,omitempty"`
	Decided         *bool                `json:"decided,omitempty"`
	Error           string               `json:"error,omitempty"`
}

const (
	namespace     = "ns"
	schedulerName = v1.DefaultSchedulerName
)

// profile is kube-scheduler's default profile (the default KubeSchedulerConfiguration's, as
// the component builds it) without preemption, with the scripted Permit plugins after the
// default set's (which has none at Permit), and HoldBind (holdbind.go) after the default
// PreBind plugins.
func profile() (schedulerapi.KubeSchedulerProfile, error) {
	cfg, err := latest.Default()
	if err != nil {
		return schedulerapi.KubeSchedulerProfile{}, err
	}
	if len(cfg.Profiles) != 1 || cfg.Profiles[0].SchedulerName != schedulerName {
		return schedulerapi.KubeSchedulerProfile{}, fmt.Errorf("unexpected default profiles %v", cfg.Profiles)
	}
	prof := cfg.Profiles[0]
	// The default plugins are all enabled at MultiPoint; disabled at PostFilter, the
	// framework leaves DefaultPreemption out of PostFilter only (expandMultiPointPlugins).
	// DynamicResources' PostFilter (claims to deallocate) goes too: gangway has no DRA.
	prof.Plugins.PostFilter.Disabled = append(prof.Plugins.PostFilter.Disabled,
		schedulerapi.Plugin{Name: names.DefaultPreemption}, schedulerapi.Plugin{Name: names.DynamicResources})
	for _, name := range scripted.Plugins {
		prof.Plugins.Permit.Enabled = append(prof.Plugins.Permit.Enabled, schedulerapi.Plugin{Name: name})
	}
	prof.Plugins.PreBind.Enabled = append(prof.Plugins.PreBind.Enabled, schedulerapi.Plugin{Name: holdBindName})
	return prof, nil
}

type harness struct {
	ctx       context.Context
	logger    klog.Logger
	api       *apiServer
	informers informers.SharedInformerFactory
	sched     *scheduler.Scheduler
	fw        framework.Framework

	// The pods the trace added, in order, and the PodScheduled condition last reported of
	// each.
	names      []string
	added      map[string]bool
	conditions map[string]*Condition

	// The PodGroups the trace created, in order, and the PodGroupScheduled condition last
	// reported of each.
	groups          []string
	groupConditions map[string]*Condition

	// What the scheduler's NextPod popped in the op being applied.
	mu     sync.Mutex
	popped string

	// What the scripted Permit plugins answer in the schedule_one op being applied.
	script *map[string]scripted.Script

	// The binding cycles the trace holds at PreBind.
	holds *holdBind
}

func newHarness(ctx context.Context) (*harness, error) {
	logger := klog.FromContext(ctx)
	h := &harness{
		ctx: ctx, logger: logger, api: newAPIServer(),
		added: map[string]bool{}, conditions: map[string]*Condition{},
		groupConditions: map[string]*Condition{},
		script:          &map[string]scripted.Script{}, holds: newHoldBind(),
	}
	prof, err := profile()
	if err != nil {
		return nil, err
	}
	registry := frameworkruntime.Registry{}
	for _, name := range scripted.Plugins {
		registry[name] = scripted.Factory(name, h.script)
	}
	registry[holdBindName] = h.holds.factory()
	// As kube-scheduler builds its informers (the pod informer without terminated pods).
	h.informers = scheduler.NewInformerFactory(h.api.client, 0)
	// Events are thrown away (a recorder with no channel).
	recorders := func(string) events.EventRecorderLogger { return &events.FakeRecorder{} }
	h.sched, err = scheduler.New(ctx, h.api.client, h.informers, nil, recorders,
		scheduler.WithProfiles(prof),
		scheduler.WithFrameworkOutOfTreeRegistry(registry),
	)
	if err != nil {
		return nil, err
	}
	h.fw = h.sched.Profiles[schedulerName]
	// The queue's own Pop, recording what it returns.
	pop := h.sched.NextPod
	h.sched.NextPod = func(logger klog.Logger) (*framework.QueuedPodInfo, error) {
		pInfo, err := pop(logger)
		if pInfo != nil && pInfo.Pod != nil {
			h.mu.Lock()
			h.popped = pInfo.Pod.Name
			h.mu.Unlock()
		}
		return pInfo, err
	}
	// As kube-scheduler's Run starts (cmd/kube-scheduler/app/server.go, Scheduler.Run), but
	// without the ScheduleOne loop: the trace calls ScheduleOne.
	h.informers.Start(ctx.Done())
	h.informers.WaitForCacheSync(ctx.Done())
	if err := h.sched.WaitForHandlersSync(ctx); err != nil {
		return nil, err
	}
	h.sched.SchedulingQueue.Run(logger)
	if h.sched.APIDispatcher != nil {
		h.sched.APIDispatcher.Run(logger)
	}
	return h, nil
}

// close stops what newHarness started, as Scheduler.Run does when its context is done.
func (h *harness) close() {
	if h.sched.APIDispatcher != nil {
		h.sched.APIDispatcher.Close()
	}
	h.sched.SchedulingQueue.Close()
	if err := h.sched.Profiles.Close(); err != nil {
		h.logger.Error(err, "Failed to close plugins")
	}
}

func quantityMilli(milli int64) resource.Quantity {
	return *resource.NewMilliQuantity(milli, resource.DecimalSI)
}

func (h *harness) apply(op Op, obs *Observation) error {
	ctx := h.ctx
	pods := h.api.client.CoreV1().Pods(namespace)
	nodes := h.api.client.CoreV1().Nodes()
	switch op.Op {
	case "node":
		capacity := v1.ResourceList{
			v1.ResourceCPU:    quantityMilli(op.CPUMilli),
			v1.ResourceMemory: resource.MustParse("64Gi"),
			v1.ResourcePods:   resource.MustParse("110"),
		}
		node := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: op.Node, UID: types.UID(op.Node)},
			Status: v1.NodeStatus{
				Capacity:    capacity,
				Allocatable: capacity.DeepCopy(),
				Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
			},
		}
		_, err := nodes.Create(ctx, node, metav1.CreateOptions{})
		return err
	case "group":
		pg := &schedulingapi.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: op.Group, Namespace: namespace}}
		if op.MinCount != nil {
			pg.Spec.SchedulingPolicy.Gang = &schedulingapi.GangSchedulingPolicy{MinCount: *op.MinCount}
		} else {
			pg.Spec.SchedulingPolicy.Basic = &schedulingapi.BasicSchedulingPolicy{}
		}
		if _, err := h.api.client.SchedulingV1alpha2().PodGroups(namespace).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
			return err
		}
		h.groups = append(h.groups, op.Group)
	case "add":
		if h.added[op.Pod] {
			return fmt.Errorf("pod %s was added before", op.Pod)
		}
		priority := op.Priority
		container := v1.Container{Name: "c", Image: "image"}
		if op.CPUMilli != 0 {
			container.Resources.Requests = v1.ResourceList{v1.ResourceCPU: quantityMilli(op.CPUMilli)}
		}
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: op.Pod, Namespace: namespace, UID: types.UID(op.Pod)},
			Spec: v1.PodSpec{
				SchedulerName: schedulerName,
				Priority:      &priority,
				Containers:    []v1.Container{container},
			},
		}
		if op.Group != "" {
			group := op.Group
			pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
		}
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return err
		}
		h.added[op.Pod] = true
		h.names = append(h.names, op.Pod)
	case "schedule_one":
		if err := scripted.Validate(op.Plugins); err != nil {
			return err
		}
		// ScheduleOne's Pop blocks while nothing is poppable: the active queue is empty and
		// (SchedulerPopFromBackoffQ) so is the backoff heap of pods rejected by a plugin (the
		// error backoff heap is never popped early).
		poppable := false
		for _, place := range h.places() {
			poppable = poppable || place == "active" || place == "backoff"
		}
		if !poppable {
			return errors.New("nothing to pop")
		}
		h.mu.Lock()
		h.popped = ""
		h.mu.Unlock()
		// The scripts answer in this op's scheduling cycle only (ScheduleOne returns when it
		// ends, the binding cycle going on in its goroutine).
		*h.script = op.Plugins
		h.sched.ScheduleOne(ctx)
		*h.script = nil
		h.mu.Lock()
		obs.Popped = h.popped
		h.mu.Unlock()
	case "fail_bind":
		if !h.added[op.Pod] {
			return fmt.Errorf("pod %s is unknown", op.Pod)
		}
		h.api.failNextBind(op.Pod)
	case "delete":
		if !h.added[op.Pod] {
			return fmt.Errorf("pod %s is unknown", op.Pod)
		}
		return pods.Delete(ctx, op.Pod, metav1.DeleteOptions{})
	case "hold_bind":
		if !h.added[op.Pod] {
			return fmt.Errorf("pod %s is unknown", op.Pod)
		}
		return h.holds.hold(op.Pod)
	case "release_bind":
		return h.holds.release(op.Pod)
	case "delete_node":
		return nodes.Delete(ctx, op.Node, metav1.DeleteOptions{})
	case "advance_ms":
		time.Sleep(time.Duration(op.Ms) * time.Millisecond)
	case "allow", "reject":
		wp := h.fw.GetWaitingPod(types.UID(op.Pod))
		if op.Op == "allow" {
			if wp != nil {
				wp.Allow(op.Plugin)
			}
			return nil
		}
		decided := false
		if wp != nil {
			decided = wp.Reject(op.Plugin, op.Message)
		}
		obs.Decided = &decided
	default:
		return fmt.Errorf("unknown op %q", op.Op)
	}
	return nil
}

// places is where the scheduling queue has each pod the trace added (as queuetrace's places,
// in-flight last), else bound if the informer's pod is assigned, else binding if the cache
// has it assumed (past Permit, in its binding cycle), else absent.
func (h *harness) places() map[string]string {
	q := h.sched.SchedulingQueue
	places := map[string]string{}
	for _, name := range h.names {
		places[name] = "absent"
		if p, err := h.informers.Core().V1().Pods().Lister().Pods(namespace).Get(name); err == nil && p.Spec.NodeName != "" {
			places[name] = "bound"
		} else if assumed, _ := h.sched.Cache.IsAssumedPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(name)}}); assumed {
			places[name] = "binding"
		}
	}
	mark := func(pods []*v1.Pod, place string) {
		for _, p := range pods {
			places[p.Name] = place
		}
	}
	mark(q.PodsInActiveQ(), "active")
	// PodsInBackoffQ lists both backoff heaps; a pod rejected by no plugin is in the error
	// heap (the rule backoffQueue.add routes by).
	for _, p := range q.PodsInBackoffQ() {
		places[p.Name] = "backoff"
		if pInfo, ok := q.GetPod(p.Name, p.Namespace); ok &&
			pInfo.UnschedulablePlugins.Len() == 0 && pInfo.PendingPlugins.Len() == 0 {
			places[p.Name] = "error_backoff"
		}
	}
	for _, p := range q.UnschedulablePods() {
		places[p.Name] = "unschedulable"
		if pInfo, ok := q.GetPod(p.Name, p.Namespace); ok && pInfo.Gated() {
			places[p.Name] = "gated"
		}
	}
	mark(q.InFlightPods(), "in_flight")
	return places
}

// settle fills in the observation once the step's goroutines are idle.
func (h *harness) settle(obs *Observation) {
	if len(h.names) > 0 {
		obs.Places = h.places()
	}
	h.fw.IterateOverWaitingPods(func(wp fwk.WaitingPod) {
		if obs.Waiting == nil {
			obs.Waiting = map[string][]string{}
		}
		plugins := wp.GetPendingPlugins()
		sort.Strings(plugins)
		obs.Waiting[wp.GetPod().Name] = plugins
	})
	for _, name := range h.names {
		p, err := h.informers.Core().V1().Pods().Lister().Pods(namespace).Get(name)
		if err == nil && p.Spec.NodeName != "" {
			if obs.Nodes == nil {
				obs.Nodes = map[string]string{}
			}
			obs.Nodes[name] = p.Spec.NodeName
		}
	}
	for _, name := range h.names {
		var now *Condition
		obj, err := h.api.tracker.Get(podsResource, namespace, name)
		if err != nil && !apierrors.IsNotFound(err) {
			obs.Error = err.Error()
			continue
		}
		if err == nil {
			for _, c := range obj.(*v1.Pod).Status.Conditions {
				if c.Type == v1.PodScheduled {
					now = &Condition{Status: string(c.Status), Reason: c.Reason, Message: c.Message}
				}
			}
		}
		recordChange(h.conditions, &obs.Conditions, name, now)
	}
}

// recordChange keeps now as name's last condition in last and, if it is set and differs from
// the one before, reports it in changed.
func recordChange(last map[string]*Condition, changed *map[string]Condition, name string, now *Condition) {
	before := last[name]
	last[name] = now
	if now == nil || (before != nil && *before == *now) {
		return
	}
	if *changed == nil {
		*changed = map[string]Condition{}
	}
	(*changed)[name] = *now
}

// settleGroups reports the PodGroupScheduled conditions that changed on the API server.
func (h *harness) settleGroups(obs *Observation) {
	for _, name := range h.groups {
		var now *Condition
		obj, err := h.api.tracker.Get(podGroupsResource, namespace, name)
		if err != nil {
			obs.Error = err.Error()
			continue
		}
		for _, c := range obj.(*schedulingapi.PodGroup).Status.Conditions {
			if c.Type == schedulingapi.PodGroupScheduled {
				now = &Condition{Status: string(c.Status), Reason: c.Reason, Message: c.Message}
			}
		}
		recordChange(h.groupConditions, &obs.GroupConditions, name, now)
	}
}

// The observations go to the process's stdout; the testing package's own output goes to
// stderr.
var out = os.Stdout

func TestMain(m *testing.M) {
	os.Stdout = os.Stderr
	metrics.Register()
	// HandleError's second handler rate-limits errors against a time taken at package init,
	// outside the bubble: inside it (the year 2000) that sleeps for decades. Errors are only
	// logged.
	utilruntime.ErrorHandlers = utilruntime.ErrorHandlers[:1]
	// The scheduler's cache debugger calls signal.Notify, whose first call starts os/signal's
	// watching goroutine, which never ends: started in the bubble it would keep the bubble
	// from ever being idle. Start it here, outside.
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR2)
	signal.Stop(c)
	// Feature gates: kube-scheduler 1.36's defaults with the gang ones on, as gangway's
	// Mode::Upstream (and gangtrace) runs them. The traces' pods name no scheduling group, so
	// ScheduleOne schedules each alone (scheduleOnePod), not in the pod-group cycle; the gates
	// still change the driver: an unscheduled pod's add is announced to the queue
	// (addPodToSchedulingQueue's MoveAllToActiveOrBackoffQueue).
	if err := realgang.EnableGangGates(); err != nil {
		fmt.Fprintln(os.Stderr, "drivertrace:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

func TestTrace(t *testing.T) {
	ops, err := jsonlines.Read[Op](os.Stdin)
	if err != nil {
		t.Fatalf("drivertrace: %v", err)
	}
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background()))
		h, err := newHarness(ctx)
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		enc := json.NewEncoder(out)
		for i, op := range ops {
			obs := Observation{Step: i + 1, Op: op.Op}
			if err := h.apply(op, &obs); err != nil {
				obs.Error = err.Error()
			}
			synctest.Wait()
			h.settle(&obs)
			h.settleGroups(&obs)
			if err := enc.Encode(obs); err != nil {
				t.Fatal(err)
			}
		}
		// Every binding cycle still waiting ends, the scheduler's loops stop and its context
		// ends (the informers, the cache's and the metrics recorder's loops), so the bubble
		// empties.
		h.holds.releaseAll()
		h.fw.IterateOverWaitingPods(func(wp fwk.WaitingPod) { wp.Reject("", "end of trace") })
		synctest.Wait()
		h.close()
		cancel()
		h.informers.Shutdown()
		// The metrics recorder looks at its stop channel once a second.
		time.Sleep(2 * time.Second)
	})
}
