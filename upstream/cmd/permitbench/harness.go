package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gangway-rs/gangway/upstream/internal/realgang"
	v1 "k8s.io/api/core/v1"
	schedulingapi "k8s.io/api/scheduling/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

const (
	namespace = "default"
	nodes     = 1000
)

// gang is one PodGroup and its members: the informer's objects and the
// scheduling cycle's assumed copies (node set), built before any timing.
type gang struct {
	name     string
	minCount int32
	pods     []*v1.Pod
	assumed  []*v1.Pod
}

// makeGangs builds nGangs gangs of size members, uids as the anchor's.
func makeGangs(nGangs, size int, minCount int32) ([]*gang, []*v1.Pod, []*v1.Pod) {
	gangs := make([]*gang, 0, nGangs)
	var pods, assumed []*v1.Pod
	for g := 0; g < nGangs; g++ {
		name := fmt.Sprintf("gang-%06d", g)
		gg := &gang{name: name, minCount: minCount}
		for m := 0; m < size; m++ {
			i := len(pods)
			group := name
			p := &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					UID:       types.UID(fmt.Sprintf("%08x-%04x-4000-8000-%012x", g, m, i)),
					Namespace: namespace,
					Name:      fmt.Sprintf("%s-%d", name, m),
				},
				Spec: v1.PodSpec{SchedulingGroup: &v1.PodSchedulingGroup{PodGroupName: &group}},
			}
			a := *p
			a.Spec.NodeName = fmt.Sprintf("node-%04d", i%nodes)
			gg.pods = append(gg.pods, p)
			gg.assumed = append(gg.assumed, &a)
			pods = append(pods, p)
			assumed = append(assumed, &a)
		}
		gangs = append(gangs, gg)
	}
	return gangs, pods, assumed
}

type noActivator struct{}

func (noActivator) Activate(klog.Logger, map[string]*v1.Pod) {}

// timeoutPermit is the real GangScheduling plugin with its Wait timeout
// replaced (W2 only: the plugin's own is a 5 min constant).
type timeoutPermit struct {
	fwk.PermitPlugin
	timeout time.Duration
}

func (t timeoutPermit) Permit(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) (*fwk.Status, time.Duration) {
	s, d := t.PermitPlugin.Permit(ctx, state, pod, nodeName)
	if s.IsWait() {
		d = t.timeout
	}
	return s, d
}

// scheduler is kube-scheduler's framework, cache and GangScheduling plugin, with
// the anchor's harness around them: one scheduling goroutine (the caller of
// scheduleOne), one binding goroutine per pod.
type scheduler struct {
	ctx    context.Context
	logger klog.Logger
	cache  internalcache.Cache
	fh     framework.Framework
	wg     sync.WaitGroup

	entered  atomic.Int64 // binding goroutines that reached WaitOnPermit
	bound    atomic.Int64
	rejected atomic.Int64

	base       time.Time
	returnedAt []int64 // W2: ns since base when WaitOnPermit returned
	index      map[types.UID]int
}

// newScheduler builds the framework with the gang plugin as its Permit plugin
// (timeout 0: the plugin's own), the PodGroups in the lister and every pod in
// its pod-group state.
func newScheduler(gangs []*gang, timeout time.Duration) (*scheduler, error) {
	ctx := context.Background()
	logger := klog.FromContext(ctx)
	opts := realgang.Options{Activator: noActivator{}}
	if timeout > 0 {
		opts.WrapGang = func(pl fwk.Plugin) fwk.Plugin {
			return timeoutPermit{PermitPlugin: pl.(fwk.PermitPlugin), timeout: timeout}
		}
	}
	parts, err := realgang.New(ctx, opts)
	if err != nil {
		return nil, err
	}
	c, fh, store := parts.Cache, parts.Framework, parts.PodGroups
	for _, g := range gangs {
		pg := &schedulingapi.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: g.name, Namespace: namespace}}
		pg.Spec.SchedulingPolicy.Gang = &schedulingapi.GangSchedulingPolicy{MinCount: g.minCount}
		if err := store.Add(pg); err != nil {
			return nil, err
		}
		for _, p := range g.pods {
			c.AddPodGroupMember(p) // the event handler's addPodToSchedulingQueue
		}
	}
	return &scheduler{ctx: ctx, logger: logger, cache: c, fh: fh, base: time.Now()}, nil
}

// scheduleOne is the scheduling cycle of a pod already placed (schedule_one.go
// from assume on): assume, Reserve, Permit, the waiting pod registered on
// Wait, then the binding goroutine.
func (s *scheduler) scheduleOne(assumed *v1.Pod) error {
	state := framework.NewCycleState()
	node := assumed.Spec.NodeName
	if err := s.cache.AssumePod(s.logger, assumed); err != nil {
		return err
	}
	if st := s.fh.RunReservePluginsReserve(s.ctx, state, assumed, node); !st.IsSuccess() {
		s.unreserve(state, assumed)
		s.rejected.Add(1)
		return nil
	}
	waits, st := s.fh.RunPermitPlugins(s.ctx, state, assumed, node)
	if !st.IsSuccess() && !st.IsWait() {
		s.unreserve(state, assumed)
		s.rejected.Add(1)
		return nil
	}
	if st.IsWait() {
		s.fh.AddWaitingPod(assumed, waits)
	}
	s.wg.Add(1)
	go s.bindingCycle(state, assumed)
	return nil
}

func (s *scheduler) bindingCycle(state fwk.CycleState, assumed *v1.Pod) {
	defer s.wg.Done()
	s.entered.Add(1)
	st := s.fh.WaitOnPermit(s.ctx, assumed)
	if s.returnedAt != nil {
		s.returnedAt[s.index[assumed.UID]] = int64(time.Since(s.base))
	}
	if !st.IsSuccess() {
		s.unreserve(state, assumed)
		s.rejected.Add(1)
		return
	}
	bind(assumed)
	s.bound.Add(1)
}

// unreserve is handleBindingCycleError's part that undoes the assume.
func (s *scheduler) unreserve(state fwk.CycleState, assumed *v1.Pod) {
	s.fh.RunReservePluginsUnreserve(s.ctx, state, assumed, assumed.Spec.NodeName)
	_ = s.cache.ForgetPod(s.logger, assumed)
}

// waiting counts the framework's waiting pods.
func (s *scheduler) waiting() int {
	n := 0
	s.fh.IterateOverWaitingPods(func(fwk.WaitingPod) { n++ })
	return n
}

// assumedLeft counts the pods the cache's pod-group states hold as assumed.
func (s *scheduler) assumedLeft(gangs []*gang) (int, error) {
	n := 0
	for _, g := range gangs {
		pgs, err := s.cache.PodGroupStates().Get(namespace, g.name)
		if err != nil {
			return 0, err
		}
		n += len(pgs.AssumedPods())
	}
	return n, nil
}

//go:noinline
func bind(*v1.Pod) {}
