//! An embedder's own parts, checked in the place of gangway's: the [`Placement`] (with the
//! queueing hints it declares, [`Placement::requeue_on`]) and the Permit plugins. The model
//! runs them exactly where the scheduler does — the placement in each scheduling cycle (and on
//! the pod-group cycle's snapshot), the Permit plugins beside the gang's, folded in the mode's
//! order — and holds the placement to its contract at every call:
//!
//! - it is a function of the pod and the cache it is given: asked again about the same pod on
//!   an equal cache, on any path, it gives the same answer (a placement that keeps a snapshot
//!   of its own goes stale, and the checker meets it on the path where the two differ);
//! - the node it names is one of the cache's with room for the pod: the cache's `assume` does
//!   not check (the placement does), so a placement that does not is an over-full node.
//!
//! A Permit plugin must be a function of the pod and its node too; the checker asks it afresh
//! at every Permit. Each Permit at which an embedder's plugin does not allow — a rejection, a
//! wait — uses one of [`Plugins::denials`]: a plugin that turns a pod away sends it round the
//! queue again, time moving on with each backoff, and the budget keeps the state space finite.
//! Past it, the path is not explored further (and is not called stuck: the budget ended it).
//! A pod an embedder's plugin holds at Permit is allowed by that plugin at any later moment
//! ([`Action::PluginAllows`](super::Action::PluginAllows)), or its timeout rejects it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use gangsched::scheduler::{CacheState, Placement, ResourceFit};
use gangsched::sync::{Arc, Mutex};
use gangsched::{PermitPlugins, PermitVerdict, PluginName, Pod, PodId, Status};

/// The parts a model runs: gangway's own by default ([`ResourceFit`], no Permit plugin beside
/// the gang's), or an embedder's.
#[derive(Clone)]
pub struct Plugins {
    placement: Arc<dyn Placement>,
    placement_name: String,
    /// Gangway's own [`ResourceFit`], whose contract is the core's own tests': not judged at
    /// every call (the checker's speed on its presets stays its own).
    trusted: bool,
    permit: PermitPlugins,
    permit_names: Arc<[PluginName]>,
    denials: u8,
    /// Which model the placement's remembered answers belong to.
    id: u64,
    /// The first contract breach found, on any thread: a placement that keeps state of its
    /// own is not a function of the path either, so the report's replay of the path to it
    /// may not meet it again, and names it from here.
    first_fault: Arc<Mutex<Option<String>>>,
}

/// The placement's answers each checker thread remembers, by model, pod and cache.
type Answers = HashMap<(u64, PodId, u64), Result<String, Status>>;

thread_local! {
    static ANSWERS: RefCell<Answers> = RefCell::new(HashMap::new());
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

impl Default for Plugins {
    fn default() -> Plugins {
        Plugins {
            placement: Arc::new(ResourceFit),
            placement_name: "ResourceFit".to_owned(),
            trusted: true,
            permit: PermitPlugins::none(),
            permit_names: Arc::from([]),
            denials: 2,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            first_fault: Arc::new(Mutex::new(None)),
        }
    }
}

impl fmt::Debug for Plugins {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plugins")
            .field("placement", &self.placement_name)
            .field("permit", &self.permit_names)
            .field("denials", &self.denials)
            .finish()
    }
}

impl Plugins {
    /// gangway's own: [`ResourceFit`], and no Permit plugin beside the gang's.
    pub fn gangways() -> Plugins {
        Plugins::default()
    }

    /// These, with the embedder's `placement`, named `name` in the report. It is judged at
    /// every call (see the module docs).
    pub fn placement(mut self, name: &str, placement: impl Placement + 'static) -> Plugins {
        self.placement = Arc::new(placement);
        self.placement_name = name.to_owned();
        self.trusted = false;
        self.id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        self
    }

    /// These, with the embedder's Permit `plugins` beside the gang's.
    pub fn permit_plugins(mut self, plugins: PermitPlugins) -> Plugins {
        self.permit_names = plugins.names().cloned().collect();
        self.permit = plugins;
        self
    }

    /// These, with `denials` Permits at which an embedder's plugin may turn a pod away (2 by
    /// default; see the module docs).
    pub fn denials(mut self, denials: u8) -> Plugins {
        self.denials = denials;
        self
    }

    /// The placement's name in the report.
    pub fn placement_name(&self) -> &str {
        &self.placement_name
    }

    /// The Permit plugins' names, in order.
    pub fn permit_names(&self) -> &[PluginName] {
        &self.permit_names
    }

    /// Whether these are gangway's own parts.
    pub fn are_gangways(&self) -> bool {
        self.trusted && self.permit_names.is_empty()
    }

    /// How many Permits an embedder's plugin may turn a pod away at, on one path.
    pub fn denial_budget(&self) -> u8 {
        if self.permit_names.is_empty() {
            0
        } else {
            self.denials
        }
    }

    pub(crate) fn permit(&self) -> &PermitPlugins {
        &self.permit
    }

    pub(crate) fn placement_events(&self) -> &'static [gangsched::queue::EventKind] {
        self.placement.requeue_on()
    }

    /// Whether `plugin` is one the placement names when it turns a pod away: any but the
    /// gang's and the Permit plugins'.
    pub(crate) fn is_placements(&self, plugin: &PluginName) -> bool {
        *plugin != gangsched::gang::GANG_SCHEDULING && !self.permit_names.contains(plugin)
    }

    /// The placement's answer for `pod` on `cache`, and — for an embedder's placement — how it
    /// broke its contract, if it did.
    pub(crate) fn place(
        &self,
        pod: &Pod,
        cache: &CacheState,
    ) -> (Result<String, Status>, Option<String>) {
        let answer = self.placement.place(pod, cache);
        if self.trusted {
            return (answer, None);
        }
        let fault = self
            .answered_before(pod, cache, &answer)
            .or_else(|| no_room(pod, cache, &answer));
        if let Some(fault) = &fault {
            self.first_fault.lock().get_or_insert_with(|| fault.clone());
        }
        (answer, fault)
    }

    /// The first breach of the placement's contract found, if one was.
    pub(crate) fn first_fault(&self) -> Option<String> {
        self.first_fault.lock().clone()
    }

    /// What the placement answered about `pod` on an equal cache before, on this thread, if
    /// that was not `answer`.
    fn answered_before(
        &self,
        pod: &Pod,
        cache: &CacheState,
        answer: &Result<String, Status>,
    ) -> Option<String> {
        let mut hasher = DefaultHasher::new();
        cache.hash(&mut hasher);
        let key = (self.id, pod.id().clone(), hasher.finish());
        ANSWERS.with(|answers| {
            let mut answers = answers.borrow_mut();
            let before = answers.entry(key).or_insert_with(|| answer.clone());
            (before != answer).then(|| {
                format!(
                    "placement {} answered {} for {} on a cache it had answered {} for: it is \
                     not a function of the pod and the cache",
                    self.placement_name,
                    said(answer),
                    pod.id(),
                    said(before)
                )
            })
        })
    }

    /// Whether an embedder's Permit plugin would not allow `pod` on `node` (a rejection or a
    /// wait): the Permit that asks it uses one of the denials.
    pub(crate) fn denies(&self, pod: &Pod, node: &str) -> bool {
        !self.permit_names.is_empty()
            && self
                .permit
                .verdicts(pod, node)
                .iter()
                .any(|(_, verdict)| !matches!(verdict, PermitVerdict::Allow))
    }
}

/// How the node `answer` names for `pod` breaks the contract: not a node of `cache`, or one
/// without room for the pod.
fn no_room(pod: &Pod, cache: &CacheState, answer: &Result<String, Status>) -> Option<String> {
    let node = answer.as_ref().ok()?;
    match cache.node(node) {
        None => Some(format!(
            "the placement chose {node} for {}: no such node",
            pod.id()
        )),
        Some(view) if !pod.requests().fits_in(&view.free()) => Some(format!(
            "the placement chose {node} for {}, which has no room for it ({} free, {} asked)",
            pod.id(),
            view.free(),
            pod.requests()
        )),
        Some(_) => None,
    }
}

fn said(answer: &Result<String, Status>) -> String {
    match answer {
        Ok(node) => node.clone(),
        Err(status) => format!("no node ({})", status.message()),
    }
}
