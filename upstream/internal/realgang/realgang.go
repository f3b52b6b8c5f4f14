// Package realgang builds kube-scheduler 1.36's own gang machinery, as gangtrace (the
// differential) and permitbench (the benchmark) both drive it: the scheduler cache as the
// framework's PodGroupManager, a fake informer factory whose PodGroup store the gang plugin
// lists from, and a framework with the real GangScheduling plugin at Permit (and, if asked, at
// PreEnqueue), the real PrioritySort and DefaultBinder a profile needs, and the real
// waiting-pods map. Nothing of upstream is copied: this only wires its parts together.
package realgang

import (
	"context"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/gangscheduling"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
)

// Options says how the parts are built.
type Options struct {
	// Activator receives the gang plugin's Activate calls.
	Activator fwk.PodActivator
	// PreEnqueue also enables GangScheduling at PreEnqueue, as a profile would.
	PreEnqueue bool
	// WrapGang, if set, wraps the real plugin once built (permitbench's W2 changes its wait).
	WrapGang func(fwk.Plugin) fwk.Plugin
	// Permit are more Permit plugins, enabled after GangScheduling in this order.
	Permit []NamedPlugin
}

// NamedPlugin is a plugin factory under its name.
type NamedPlugin struct {
	Name    string
	Factory frameworkruntime.PluginFactory
}

// Parts are the built machinery.
type Parts struct {
	Cache     internalcache.Cache
	Framework framework.Framework
	// PodGroups is the informer's store the gang plugin's lister reads: add PodGroups here.
	PodGroups cache.Store
}

// New builds the parts.
func New(ctx context.Context, opts Options) (*Parts, error) {
	logger := klog.FromContext(ctx)
	c := internalcache.New(ctx, nil, true)
	informerFactory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	groups := informerFactory.Scheduling().V1alpha2().PodGroups().Informer().GetStore()
	gang := frameworkruntime.FactoryAdapter(feature.Features{EnableGangScheduling: true}, gangscheduling.New)
	if opts.WrapGang != nil {
		real := gang
		gang = func(ctx context.Context, obj k8sruntime.Object, fh fwk.Handle) (fwk.Plugin, error) {
			pl, err := real(ctx, obj, fh)
			if err != nil {
				return nil, err
			}
			return opts.WrapGang(pl), nil
		}
	}
	plugins := []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
		tf.RegisterPluginAsExtensions(gangscheduling.Name, gang, "Permit"),
	}
	for _, pl := range opts.Permit {
		plugins = append(plugins, tf.RegisterPluginAsExtensions(pl.Name, pl.Factory, "Permit"))
	}
	if opts.PreEnqueue {
		// The testing helper knows no PreEnqueue extension point; enabled as a profile would.
		plugins = append(plugins, func(_ *frameworkruntime.Registry, profile *schedulerapi.KubeSchedulerProfile) {
			profile.Plugins.PreEnqueue.Enabled = append(profile.Plugins.PreEnqueue.Enabled,
				schedulerapi.Plugin{Name: gangscheduling.Name})
		})
	}
	fh, err := tf.NewFramework(ctx, plugins, "default-scheduler",
		frameworkruntime.WithInformerFactory(informerFactory),
		frameworkruntime.WithPodGroupManager(c),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithPodActivator(opts.Activator),
		frameworkruntime.WithSnapshotSharedLister(internalcache.NewEmptySnapshot()),
		frameworkruntime.WithLogger(logger),
	)
	if err != nil {
		return nil, err
	}
	return &Parts{Cache: c, Framework: fh, PodGroups: groups}, nil
}

// EnableGangGates turns on the gang feature gates, GenericWorkload and GangScheduling, on
// top of 1.36's defaults — as gangway's Mode::Upstream runs kube-scheduler.
func EnableGangGates() error {
	return utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{
		"GenericWorkload": true,
		"GangScheduling":  true,
	})
}
