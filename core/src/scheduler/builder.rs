use crate::sync::Arc;
use crate::{GangScheduling, PermitPlugins, SchedulingQueue, WaitingPods};

use super::locked::{Driver, DriverSink, StepGate};
use super::scheduler::Inner;
use super::tally::{Counted, Tally};
use super::{
    Binder, Cache, DiscardOutcomes, InMemoryBinder, OutcomeSink, Placement, ResourceFit, Scheduler,
    SchedulerConfig, SchedulerPlugins,
};

/// Builds a [`Scheduler`] with the parts an embedder plugs in: the [`Placement`] (default
/// [`ResourceFit`]), the [`Binder`] (default [`InMemoryBinder`]) and the [`OutcomeSink`] that
/// learns what became of every pod (default: none kept).
///
/// ```
/// use gangsched::scheduler::{outcome_channel, InMemoryBinder, Node, PodOutcome};
/// use gangsched::{Pod, Resources, Scheduler, SchedulerConfig, Time};
///
/// let (outcomes, received) = outcome_channel();
/// let scheduler = Scheduler::builder(SchedulerConfig::default())
///     .binder(InMemoryBinder::new())
///     .outcomes(outcomes)
///     .build();
/// let now = Time::ZERO;
/// scheduler.add_node(Node::new("n1", Resources::new(1000, 1 << 30)), now).unwrap();
/// scheduler.add_pod(Pod::new("a", "ml", "solo"), now).unwrap();
/// scheduler.schedule_one(now);
/// scheduler.run_binding_cycles(now);
/// let outcome = received.try_recv().unwrap();
/// assert!(matches!(&outcome, PodOutcome::Bound { node, .. } if node == "n1"));
/// assert_eq!(outcome.to_string(), "ml/solo bound to n1");
/// ```
#[must_use = "a builder does nothing until built"]
pub struct SchedulerBuilder {
    config: SchedulerConfig,
    placement: Arc<dyn Placement>,
    binder: Arc<dyn Binder>,
    outcomes: Arc<dyn OutcomeSink>,
    permit_plugins: PermitPlugins,
}

impl Scheduler {
    /// A builder for a scheduler with `config`, to plug in a placement, a binder and an
    /// outcome sink.
    pub fn builder(config: SchedulerConfig) -> SchedulerBuilder {
        SchedulerBuilder {
            config,
            placement: Arc::new(ResourceFit),
            binder: Arc::new(InMemoryBinder::default()),
            outcomes: Arc::new(DiscardOutcomes),
            permit_plugins: PermitPlugins::none(),
        }
    }
}

impl SchedulerBuilder {
    /// Places pods with `placement` (user code: a panic in it is caught and the pod backs off
    /// as an error).
    pub fn placement(mut self, placement: impl Placement + 'static) -> SchedulerBuilder {
        self.placement = Arc::new(placement);
        self
    }

    /// Binds pods with `binder` (user code: a panic in it is caught as
    /// [`BindError::Panicked`](super::BindError::Panicked), the reservation released and the
    /// pod requeued with error backoff).
    pub fn binder(mut self, binder: impl Binder + 'static) -> SchedulerBuilder {
        self.binder = Arc::new(binder);
        self
    }

    /// Delivers every pod's [`PodOutcome`](super::PodOutcome) to `outcomes`, outside every
    /// lock.
    pub fn outcomes(mut self, outcomes: impl OutcomeSink + 'static) -> SchedulerBuilder {
        self.outcomes = Arc::new(outcomes);
        self
    }

    /// Asks `plugins` at Permit besides the gang plugin — after it in
    /// [`Mode::Upstream`](crate::Mode::Upstream), before it in
    /// [`Mode::Hardened`](crate::Mode::Hardened) (see
    /// [`GangScheduling::permit_with`](crate::GangScheduling::permit_with)). They are user
    /// code: a panic in one is caught, counted, and rejects the pod as the plugin's error, its
    /// reservation released (I4). A plugin that asked a pod to wait decides it later through
    /// [`Scheduler::waiting`](super::Scheduler::waiting); its timeout rejects it otherwise.
    pub fn permit_plugins(mut self, plugins: PermitPlugins) -> SchedulerBuilder {
        self.permit_plugins = plugins;
        self
    }

    /// The scheduler.
    pub fn build(self) -> Scheduler {
        let SchedulerBuilder {
            config,
            placement,
            binder,
            outcomes,
            permit_plugins,
        } = self;
        let driver = Arc::new(Driver::default());
        let counts = driver.clone();
        let permit_plugins = permit_plugins.with_panic_hook(move |_, _| {
            counts.with(|d| d.tally_mut().count(Counted::PluginPanic));
        });
        let waiting = WaitingPods::with_sink(DriverSink(driver.clone()));
        let gang = GangScheduling::with_timeout(config.mode, waiting, config.permit_timeout);
        let plugins = SchedulerPlugins::new(gang.registry().clone())
            .with_unhinted(permit_plugins.names())
            .with_placement_events(placement.requeue_on());
        let queue = SchedulingQueue::new(config.queue, Arc::new(plugins));
        Scheduler {
            inner: Arc::new(Inner {
                config,
                gang,
                queue,
                cache: Cache::default(),
                placement,
                binder,
                permit_plugins,
                outcomes,
                driver,
                step_gate: StepGate::default(),
            }),
        }
    }
}
