package gangtrace

import "github.com/gangway-rs/gangway/upstream/internal/scripted"

// The scripted Permit plugins are shared with drivertrace (internal/scripted); these are the
// names the harness uses for them.

// The Permit plugins a trace scripts beside GangScheduling, in the order the framework runs
// them (after the gang plugin, as a profile that adds plugins orders them).
var scriptedPlugins = scripted.Plugins

// Script is what one scripted Permit plugin answers in a schedule op.
type Script = scripted.Script

// validScripts says why a schedule op's scripts are not a trace's.
var validScripts = scripted.Validate

// scriptedFactory builds the plugin `name`, reading the harness's current script.
var scriptedFactory = scripted.Factory
