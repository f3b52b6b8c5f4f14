//! A gang's batch decision on a sharded waiting map, as the `loom_shards` models see it: two
//! pods in different shards, allowed together or rejected one by one. [`RealShards`] is the
//! real [`WaitingPods`]; [`broken`] holds two classic mistakes a sharded map can make, which
//! the models must find (the witnesses).

use std::time::Duration;

use gangsched::checking::waiting_shard_of;
use gangsched::{Pod, PodId, Time, WaitingPods};

/// One sharded map holding two waiting pods, `a` and `b`, in different shards, each waiting
/// for the plugins [`PLUGINS`].
pub trait GangBatch: Clone + Send + Sync + 'static {
    /// The map, with `a` and `b` waiting.
    fn with_two_shards() -> Self;
    /// The two pods' ids, `[a, b]`, in different shards.
    fn ids(&self) -> [PodId; 2];
    /// Clears `plugin` for every pod of `ids`, all or none; `Err` names a pod not waiting.
    fn allow_all(&self, ids: &[PodId], plugin: &str) -> Result<usize, PodId>;
    /// Rejects pod `id`; `true` if this call decided it.
    fn reject(&self, id: &PodId) -> bool;
    /// Whether pod `id` is still waiting.
    fn waiting(&self, id: &PodId) -> bool;
}

/// The first of `b0`, `b1`, … that `map` keeps in another shard than `a`.
pub fn in_another_shard(map: &WaitingPods, a: &PodId) -> PodId {
    (0..)
        .map(|i| PodId::from(format!("b{i}")))
        .find(|b| waiting_shard_of(map, b) != waiting_shard_of(map, a))
        .expect("some uid falls in another shard")
}

/// What each pod waits for.
pub const PLUGINS: [&str; 2] = ["GangScheduling", "Other"];

/// The real map.
#[derive(Clone, Debug)]
pub struct RealShards {
    map: WaitingPods,
    ids: [PodId; 2],
}

impl GangBatch for RealShards {
    fn with_two_shards() -> Self {
        let map = WaitingPods::new();
        let a = PodId::from("a");
        let b = in_another_shard(&map, &a);
        for id in [&a, &b] {
            let waits = PLUGINS.map(|p| (p.into(), Duration::from_secs(60)));
            map.add(Pod::new(id.as_str(), "ns", id.as_str()), waits, Time::ZERO)
                .expect("a new pod");
        }
        RealShards { map, ids: [a, b] }
    }

    fn ids(&self) -> [PodId; 2] {
        self.ids.clone()
    }

    fn allow_all(&self, ids: &[PodId], plugin: &str) -> Result<usize, PodId> {
        self.map.allow_all(ids, plugin)
    }

    fn reject(&self, id: &PodId) -> bool {
        self.map.reject(id, PLUGINS[0], "rejected")
    }

    fn waiting(&self, id: &PodId) -> bool {
        self.map.find(id).is_some()
    }
}

/// Sharded maps with one mistake each.
pub mod broken {
    use std::collections::BTreeMap;

    use gangsched::sync::{Arc, Mutex};
    use gangsched::PodId;

    use super::{GangBatch, PLUGINS};

    /// Two shards: the pods still waiting, each with its pending plugins.
    type Shard = Mutex<BTreeMap<PodId, Vec<&'static str>>>;

    /// How a broken map locks the shards of a batch.
    pub trait Locking: Send + Sync + 'static {
        /// Runs `ids`' batch on `shards`: `check` sees every pod's shard before anything
        /// changes (all or none), then `apply` clears the plugin pod by pod.
        fn allow_all(shards: &[Shard; 2], ids: &[PodId], plugin: &str) -> Result<usize, PodId>;
    }

    /// Locks the shards in the order the batch names its pods: two batches naming the same
    /// pods in opposite orders deadlock.
    #[derive(Debug)]
    pub struct InNamedOrder;

    /// Locks one shard at a time, deciding its pods before taking the next: a racing
    /// rejection of a later member leaves the earlier ones allowed — a partial gang (H1).
    #[derive(Debug)]
    pub struct OneAtATime;

    /// A map with the locking mistake `K`.
    #[derive(Debug)]
    pub struct BrokenShards<K> {
        shards: Arc<[Shard; 2]>,
        ids: [PodId; 2],
        locking: std::marker::PhantomData<fn() -> K>,
    }

    impl<K> Clone for BrokenShards<K> {
        fn clone(&self) -> Self {
            BrokenShards {
                shards: self.shards.clone(),
                ids: self.ids.clone(),
                locking: std::marker::PhantomData,
            }
        }
    }

    impl<K> BrokenShards<K> {
        fn shard(&self, id: &PodId) -> &Shard {
            &self.shards[shard_index(id)]
        }
    }

    /// Pod `a` lives in shard 0, `b` in shard 1.
    fn shard_index(id: &PodId) -> usize {
        usize::from(id.as_str() != "a")
    }

    /// Clears `plugin` for `id` in `pods`; `true` if that allowed it.
    fn clear(pods: &mut BTreeMap<PodId, Vec<&'static str>>, id: &PodId, plugin: &str) -> bool {
        let Some(pending) = pods.get_mut(id) else {
            return false;
        };
        pending.retain(|p| *p != plugin);
        let allowed = pending.is_empty();
        if allowed {
            pods.remove(id);
        }
        allowed
    }

    impl Locking for InNamedOrder {
        fn allow_all(shards: &[Shard; 2], ids: &[PodId], plugin: &str) -> Result<usize, PodId> {
            let mut guards: Vec<(usize, _)> = Vec::new();
            for id in ids {
                let index = shard_index(id);
                if guards.iter().all(|(i, _)| *i != index) {
                    guards.push((index, shards[index].lock())); // the mistake: named order
                }
            }
            for id in ids {
                let (_, guard) = guards.iter().find(|(i, _)| *i == shard_index(id)).unwrap();
                if !guard.contains_key(id) {
                    return Err(id.clone());
                }
            }
            let mut allowed = 0;
            for id in ids {
                let index = shard_index(id);
                let (_, guard) = guards.iter_mut().find(|(i, _)| *i == index).unwrap();
                allowed += usize::from(clear(guard, id, plugin));
            }
            Ok(allowed)
        }
    }

    impl Locking for OneAtATime {
        fn allow_all(shards: &[Shard; 2], ids: &[PodId], plugin: &str) -> Result<usize, PodId> {
            let mut allowed = 0;
            for id in ids {
                let mut guard = shards[shard_index(id)].lock(); // the mistake: one at a time
                if !guard.contains_key(id) {
                    return Err(id.clone());
                }
                allowed += usize::from(clear(&mut guard, id, plugin));
            }
            Ok(allowed)
        }
    }

    impl<K: Locking> GangBatch for BrokenShards<K> {
        fn with_two_shards() -> Self {
            let ids = [PodId::from("a"), PodId::from("b")];
            let shard = |id: &PodId| Mutex::new(BTreeMap::from([(id.clone(), PLUGINS.to_vec())]));
            BrokenShards {
                shards: Arc::new([shard(&ids[0]), shard(&ids[1])]),
                ids,
                locking: std::marker::PhantomData,
            }
        }

        fn ids(&self) -> [PodId; 2] {
            self.ids.clone()
        }

        fn allow_all(&self, ids: &[PodId], plugin: &str) -> Result<usize, PodId> {
            K::allow_all(&self.shards, ids, plugin)
        }

        fn reject(&self, id: &PodId) -> bool {
            self.shard(id).lock().remove(id).is_some()
        }

        fn waiting(&self, id: &PodId) -> bool {
            self.shard(id).lock().contains_key(id)
        }
    }
}
