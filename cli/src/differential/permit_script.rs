//! The Permit plugins a gang trace scripts beside the gang plugin's, on both sides: in
//! `upstream/cmd/gangtrace` real framework plugins, here [`PermitPlugin`]s run by gangway's own
//! Permit step ([`GangScheduling::permit_with`](gangsched::GangScheduling::permit_with)). Both
//! sides register the same plugins in the same order, after the gang plugin; a schedule op
//! says what each answers, and a plugin it does not name allows.

use std::collections::BTreeMap;
use std::time::Duration;

use gangsched::sync::{Arc, Mutex};
use gangsched::{Code, PermitPlugin, PermitPlugins, PermitVerdict, PluginName, Pod, Status};
use serde::{Deserialize, Serialize};

/// The scripted plugins, in the order the Permit step asks them (`Plugins` in
/// `upstream/internal/scripted/scripted.go`).
pub const SCRIPTED_PLUGINS: [&str; 2] = ["PermitA", "PermitB"];

/// What one scripted plugin answers: a code (`Success` when empty), a message, and for `Wait`
/// its timeout.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Script {
    /// `Success`, `Wait`, `Unschedulable`, `UnschedulableAndUnresolvable` or `Error`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub code: String,
    /// The status's reason (an `Error`'s message).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// A `Wait`'s timeout, in milliseconds.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub wait_ms: u64,
}

fn is_zero(ms: &u64) -> bool {
    *ms == 0
}

impl Script {
    /// The verdict this script makes, or why it is not one.
    pub fn verdict(&self) -> Result<PermitVerdict, String> {
        let status = |code| match self.message.as_str() {
            "" => Status::new(code),
            reason => Status::with_reason(code, reason),
        };
        Ok(match self.code.as_str() {
            "" | "Success" => PermitVerdict::Allow,
            "Wait" => PermitVerdict::Wait {
                timeout: Duration::from_millis(self.wait_ms),
                reason: self.message.clone(),
            },
            "Unschedulable" => PermitVerdict::Reject(status(Code::Unschedulable)),
            "UnschedulableAndUnresolvable" => {
                PermitVerdict::Reject(status(Code::UnschedulableAndUnresolvable))
            }
            "Error" => PermitVerdict::Reject(Status::with_reason(Code::Error, &self.message)),
            other => return Err(format!("unknown scripted code {other:?}")),
        })
    }
}

/// A scripted plugin with its answer for one scheduling cycle.
struct Scripted {
    name: &'static str,
    verdict: PermitVerdict,
}

impl PermitPlugin for Scripted {
    fn name(&self) -> PluginName {
        PluginName::new_static(self.name)
    }

    fn permit(&self, _: &Pod, _: &str) -> PermitVerdict {
        self.verdict.clone()
    }
}

/// The scripted plugins answering `scripts` for one scheduling cycle; an unknown code is an
/// error of the trace.
pub fn scripted_plugins(scripts: &BTreeMap<String, Script>) -> Result<PermitPlugins, String> {
    if let Some(unknown) = scripts
        .keys()
        .find(|k| !SCRIPTED_PLUGINS.contains(&k.as_str()))
    {
        return Err(format!(
            "no scripted permit plugin {unknown} (there are {})",
            SCRIPTED_PLUGINS.join(", ")
        ));
    }
    let mut plugins: Vec<Arc<dyn PermitPlugin>> = Vec::new();
    for name in SCRIPTED_PLUGINS {
        let verdict = scripts
            .get(name)
            .map_or(Ok(PermitVerdict::Allow), Script::verdict)?;
        plugins.push(Arc::new(Scripted { name, verdict }));
    }
    PermitPlugins::new(plugins).map_err(|e| e.to_string())
}

/// The scripts a driver trace's current `schedule_one` gives, shared with the plugins of
/// [`switchable_plugins`]: a scheduler's plugins are fixed when it is built, their answers
/// change with each cycle.
#[derive(Clone, Default)]
pub struct Scripts(Arc<Mutex<BTreeMap<String, Script>>>);

impl Scripts {
    /// The plugins answer `scripts` until [`clear`](Self::clear); an unknown plugin or code is
    /// an error of the trace, and nothing changes.
    pub fn set(&self, scripts: &BTreeMap<String, Script>) -> Result<(), String> {
        scripted_plugins(scripts)?;
        *self.0.lock() = scripts.clone();
        Ok(())
    }

    /// Every plugin allows again.
    pub fn clear(&self) {
        self.0.lock().clear();
    }

    fn verdict(&self, name: &str) -> PermitVerdict {
        let scripts = self.0.lock();
        scripts
            .get(name)
            .and_then(|s| s.verdict().ok())
            .unwrap_or(PermitVerdict::Allow)
    }
}

/// A scripted plugin reading its answer from [`Scripts`] when asked.
struct Switchable {
    name: &'static str,
    scripts: Scripts,
}

impl PermitPlugin for Switchable {
    fn name(&self) -> PluginName {
        PluginName::new_static(self.name)
    }

    fn permit(&self, _: &Pod, _: &str) -> PermitVerdict {
        self.scripts.verdict(self.name)
    }
}

/// The scripted plugins, in order, answering whatever `scripts` holds when Permit asks them.
pub fn switchable_plugins(scripts: &Scripts) -> PermitPlugins {
    let plugins = SCRIPTED_PLUGINS.map(|name| {
        Arc::new(Switchable {
            name,
            scripts: scripts.clone(),
        }) as Arc<dyn PermitPlugin>
    });
    PermitPlugins::new(plugins).expect("the scripted plugins have distinct names")
}
