//! The counterexample timeline: the steps that lead the model to a broken invariant, as a
//! numbered text timeline, an SVG sequence diagram or JSON.
//!
//! Everything here is generic over the model: a [`Step`] is just strings (actor, action, pod,
//! gang, what changed, which invariant broke), so any model can describe its transitions with
//! it. Output is deterministic — the same timeline always renders to the same bytes.

use std::fmt::{self, Write as _};
use std::io;

use serde::{Deserialize, Serialize};

/// The text timeline wraps lines longer than this many characters.
const TEXT_WIDTH: usize = 100;
/// However deep the text column starts, it is at least this wide.
const MIN_TEXT_COLUMN: usize = 40;

/// One action in a counterexample: who did what to which pod and gang, and what changed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Who acted, e.g. `"scheduler"`, `"binder-1"`, `"timer"`, `"cluster"`.
    pub actor: String,
    /// What it did, as a short verb phrase, e.g. `"permit: wait"`.
    pub action: String,
    /// The pod the action was about, if any.
    pub pod: Option<String>,
    /// The gang the action was about, if any.
    pub gang: Option<String>,
    /// What changed, one entry each, e.g. `"trainer-0: assumed on node-0"`.
    pub changes: Vec<String>,
    /// Set on the step after which an invariant broke, e.g.
    /// `"I3: 1 of 3 members passed Permit"`.
    pub violation: Option<String>,
}

impl Step {
    /// A step in which `actor` did `action`, with no pod, gang, changes or violation.
    pub fn new(actor: impl Into<String>, action: impl Into<String>) -> Self {
        Step {
            actor: actor.into(),
            action: action.into(),
            ..Step::default()
        }
    }

    /// This step, about `pod`.
    #[must_use]
    pub fn with_pod(mut self, pod: impl Into<String>) -> Self {
        self.pod = Some(pod.into());
        self
    }

    /// This step, about `gang`.
    #[must_use]
    pub fn with_gang(mut self, gang: impl Into<String>) -> Self {
        self.gang = Some(gang.into());
        self
    }

    /// This step, with `change` appended to what changed.
    #[must_use]
    pub fn with_change(mut self, change: impl Into<String>) -> Self {
        self.changes.push(change.into());
        self
    }

    /// This step, marked as the one after which an invariant broke (`message` says which).
    #[must_use]
    pub fn with_violation(mut self, message: impl Into<String>) -> Self {
        self.violation = Some(message.into());
        self
    }
}

/// A counterexample: a title and the steps, in order, that lead to the violation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timeline {
    /// One line saying what the timeline shows, e.g. `"I3 violated after 4 steps"`.
    pub title: String,
    /// The steps, first to last.
    pub steps: Vec<Step>,
}

impl Timeline {
    /// An empty timeline called `title`.
    pub fn new(title: impl Into<String>) -> Self {
        Timeline {
            title: title.into(),
            steps: Vec::new(),
        }
    }

    /// Appends `step`.
    pub fn push(&mut self, step: Step) {
        self.steps.push(step);
    }

    /// Writes the timeline as text: the title, then one numbered line per step with aligned
    /// actor, pod, gang and action columns (`action → change; change; …`, wrapped under the
    /// action column past about 100 characters), and a `✗ message` line under a step that
    /// broke an invariant.
    pub fn write_text(&self, out: &mut impl io::Write) -> io::Result<()> {
        out.write_all(self.text().as_bytes())
    }

    /// The timeline as pretty-printed JSON (`{"title": …, "steps": [{"actor": …}, …]}`).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| {
            // Cannot happen for these types; still, never panic.
            format!(
                "{{\"error\": {}}}",
                serde_json::Value::String(e.to_string())
            )
        })
    }

    /// The timeline as a self-contained SVG sequence diagram: one lifeline per actor (in order
    /// of first appearance), one numbered row per step with a box on the acting actor's
    /// lifeline and an arrow to the action, pod and gang, the changes in smaller text below,
    /// and the step that broke an invariant highlighted in red with its message.
    pub fn to_svg(&self) -> String {
        svg(self)
    }

    fn text(&self) -> String {
        let mut out = one_line(&self.title);
        out.push('\n');
        if self.steps.is_empty() {
            out.push_str("    (no steps)\n");
            return out;
        }
        let num_w = self.steps.len().to_string().len().max(2);
        let actors: Vec<String> = self.steps.iter().map(|s| one_line(&s.actor)).collect();
        let pods: Vec<String> = self
            .steps
            .iter()
            .map(|s| s.pod.as_deref().map_or_else(|| "-".to_owned(), one_line))
            .collect();
        let gangs: Vec<String> = self
            .steps
            .iter()
            .map(|s| {
                s.gang
                    .as_deref()
                    .map_or_else(|| "-".to_owned(), |g| format!("gang {}", one_line(g)))
            })
            .collect();
        let show_pods = self.steps.iter().any(|s| s.pod.is_some());
        let show_gangs = self.steps.iter().any(|s| s.gang.is_some());
        let actor_w = max_chars(&actors);
        let pod_w = max_chars(&pods);
        let gang_w = max_chars(&gangs);

        let columns = actors.iter().zip(&pods).zip(&gangs);
        for (i, (step, ((actor, pod), gang))) in self.steps.iter().zip(columns).enumerate() {
            let mut head = format!("{:>num_w$}. {actor:<actor_w$}  ", i + 1);
            if show_pods {
                let _ = write!(head, "{pod:<pod_w$}  ");
            }
            if show_gangs {
                let _ = write!(head, "{gang:<gang_w$}  ");
            }
            let text_col = chars(&head);
            let width = TEXT_WIDTH.saturating_sub(text_col).max(MIN_TEXT_COLUMN);
            for (k, line) in wrap(&text_pieces(step), width).iter().enumerate() {
                let mut l = if k == 0 {
                    head.clone()
                } else {
                    " ".repeat(text_col)
                };
                l.push_str(line);
                out.push_str(l.trim_end());
                out.push('\n');
            }
            if let Some(v) = &step.violation {
                let _ = writeln!(out, "{}✗ {}", " ".repeat(num_w + 1), one_line(v));
            }
        }
        out
    }
}

impl fmt::Display for Timeline {
    /// The same text as [`Timeline::write_text`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

/// `s` on one line: control characters (newlines, tabs, …) become spaces.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The width of `s` in characters.
fn chars(s: &str) -> usize {
    s.chars().count()
}

fn max_chars(v: &[String]) -> usize {
    v.iter().map(|s| chars(s)).max().unwrap_or(0)
}

/// The step's action column split where it may wrap best: `action → change1;`, `change2;`, …
/// (joined with spaces this is the action, an arrow and the changes joined by `"; "`).
fn text_pieces(step: &Step) -> Vec<String> {
    let action = one_line(&step.action);
    let changes: Vec<String> = step.changes.iter().map(|c| one_line(c)).collect();
    if changes.is_empty() {
        return vec![action];
    }
    let n = changes.len();
    changes
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let mut piece = if i == 0 && !action.is_empty() {
                format!("{action} → {c}")
            } else {
                c
            };
            if i + 1 < n {
                piece.push(';');
            }
            piece
        })
        .collect()
}

/// Fills lines of at most `width` characters with `pieces` joined by spaces, breaking between
/// pieces where possible and between words of a piece too long for a line of its own. A
/// single word longer than `width` gets a line to itself. Always at least one line.
fn wrap(pieces: &[String], width: usize) -> Vec<String> {
    fn fits(cur: &str, s: &str, width: usize) -> bool {
        let sep = usize::from(!cur.is_empty());
        chars(cur) + sep + chars(s) <= width
    }
    fn append(cur: &mut String, s: &str) {
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(s);
    }
    let mut lines = Vec::new();
    let mut cur = String::new();
    for piece in pieces {
        if fits(&cur, piece, width) {
            append(&mut cur, piece);
            continue;
        }
        if !cur.is_empty() {
            lines.push(std::mem::take(&mut cur));
        }
        if chars(piece) <= width {
            cur.clone_from(piece);
            continue;
        }
        for word in piece.split(' ').filter(|w| !w.is_empty()) {
            if !cur.is_empty() && !fits(&cur, word, width) {
                lines.push(std::mem::take(&mut cur));
            }
            append(&mut cur, word);
        }
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

// ---------------------------------------------------------------------------------------------
// SVG

/// Outer margin, in pixels.
const MARGIN: usize = 20;
/// Width of the step-number column.
const NUM_COL: usize = 44;
/// Narrowest actor lane.
const MIN_LANE: usize = 120;
/// Pixels per character of 12px monospace text (about 7.2, rounded up).
const CHAR_PX: usize = 8;
/// Pixels per character of the 11px text used for changes.
const SMALL_CHAR_PX: usize = 7;
/// Pixels per character of the 14px bold title.
const TITLE_CHAR_PX: usize = 9;
/// Gap between the last lifeline and the text column.
const TEXT_GAP: usize = 28;
/// Narrowest text column.
const MIN_TEXT_PX: usize = 240;
/// Changes wrap past this many characters in the diagram.
const SVG_WRAP: usize = 90;
/// Height of the title band.
const TITLE_H: usize = 30;
/// Height of the actor boxes.
const ACTOR_BOX_H: usize = 26;
/// Height of an action or violation line.
const LINE_H: usize = 16;
/// Height of a change line.
const SMALL_LINE_H: usize = 14;
/// Padding above and below the text of a row.
const ROW_PAD: usize = 8;
/// Lane colours, by actor (no red: red means a violation).
const PALETTE: [&str; 8] = [
    "#1f5fa8", "#2b8a3e", "#7048a8", "#8a5a2b", "#1b8a8a", "#a8327a", "#5f6b12", "#555555",
];
/// The violation colour.
const RED: &str = "#c00";

/// One laid-out step row.
struct Row {
    y: usize,
    height: usize,
    lane: usize,
    main: String,
    details: String,
    changes: Vec<String>,
    violation: Vec<String>,
}

fn svg(t: &Timeline) -> String {
    // Actors in order of first appearance.
    let mut actors: Vec<String> = Vec::new();
    for s in &t.steps {
        let a = one_line(&s.actor);
        if !actors.contains(&a) {
            actors.push(a);
        }
    }
    let lane_w = (max_chars(&actors) * CHAR_PX + 24).max(MIN_LANE);
    let lanes_x = MARGIN + NUM_COL;
    let lane_cx = |i: usize| lanes_x + lane_w * i + lane_w / 2;
    let text_x = lanes_x + lane_w * actors.len() + TEXT_GAP;
    let box_y = MARGIN + TITLE_H;
    let rows_y = box_y + ACTOR_BOX_H + 12;

    // Lay out the rows.
    let mut rows = Vec::with_capacity(t.steps.len());
    let mut y = rows_y;
    let mut text_w = MIN_TEXT_PX;
    for s in &t.steps {
        let a = one_line(&s.actor);
        let lane = actors.iter().position(|x| *x == a).unwrap_or(0);
        let main = one_line(&s.action);
        let mut details = String::new();
        if let Some(p) = &s.pod {
            let _ = write!(details, "  pod {}", one_line(p));
        }
        if let Some(g) = &s.gang {
            let _ = write!(details, "  gang {}", one_line(g));
        }
        let mut changes = Vec::new();
        for c in &s.changes {
            for (k, l) in wrap(&[one_line(c)], SVG_WRAP).into_iter().enumerate() {
                changes.push(if k == 0 {
                    format!("· {l}")
                } else {
                    format!("  {l}")
                });
            }
        }
        let violation = match &s.violation {
            Some(v) => wrap(&[format!("✗ {}", one_line(v))], SVG_WRAP),
            None => Vec::new(),
        };
        text_w = text_w
            .max((chars(&main) + chars(&details)) * CHAR_PX)
            .max(max_chars(&changes) * SMALL_CHAR_PX)
            .max(max_chars(&violation) * CHAR_PX);
        let height = 2 * ROW_PAD + LINE_H + changes.len() * SMALL_LINE_H + violation.len() * LINE_H;
        rows.push(Row {
            y,
            height,
            lane,
            main,
            details,
            changes,
            violation,
        });
        y += height;
    }
    let rows_end = y.max(rows_y + LINE_H);
    let width = (text_x + text_w).max(MARGIN + chars(&t.title) * TITLE_CHAR_PX) + MARGIN;
    let height = rows_end + 8 + MARGIN;
    let any_violation = rows.iter().any(|r| !r.violation.is_empty());

    let mut o = String::new();
    let _ = writeln!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"monospace\" font-size=\"12\" \
         xml:space=\"preserve\" style=\"white-space:pre\">"
    );
    let _ = writeln!(o, "<title>{}</title>", esc(&t.title));
    o.push_str("<defs>\n");
    o.push_str(&marker("arrow", "#333"));
    if any_violation {
        o.push_str(&marker("arrow-red", RED));
    }
    o.push_str("</defs>\n");
    let _ = writeln!(
        o,
        "<rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#fff\"/>"
    );
    let _ = writeln!(
        o,
        "<text x=\"{MARGIN}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        MARGIN + 16,
        esc(&t.title)
    );

    // Row backgrounds: banded, the violation row red.
    for (i, r) in rows.iter().enumerate() {
        let (fill, stroke) = if !r.violation.is_empty() {
            ("#fde8e8", format!(" stroke=\"{RED}\" stroke-width=\"1.5\""))
        } else if i % 2 == 1 {
            ("#f4f5f7", String::new())
        } else {
            continue;
        };
        let _ = writeln!(
            o,
            "<rect x=\"{MARGIN}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"{stroke}/>",
            r.y,
            width - 2 * MARGIN,
            r.height
        );
    }

    // Actor boxes and lifelines.
    for (i, a) in actors.iter().enumerate() {
        let cx = lane_cx(i);
        let color = PALETTE[i % PALETTE.len()];
        let bw = lane_w - 16;
        let _ = writeln!(
            o,
            "<rect x=\"{}\" y=\"{box_y}\" width=\"{bw}\" height=\"{ACTOR_BOX_H}\" rx=\"4\" \
             fill=\"#fff\" stroke=\"{color}\" stroke-width=\"1.5\"/>",
            cx - bw / 2
        );
        let _ = writeln!(
            o,
            "<text x=\"{cx}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\" \
             fill=\"{color}\">{}</text>",
            box_y + 17,
            esc(a)
        );
        let _ = writeln!(
            o,
            "<line x1=\"{cx}\" y1=\"{}\" x2=\"{cx}\" y2=\"{}\" stroke=\"{color}\" \
             stroke-dasharray=\"4 4\"/>",
            box_y + ACTOR_BOX_H,
            rows_end + 8
        );
    }

    // Steps.
    for (i, r) in rows.iter().enumerate() {
        let bad = !r.violation.is_empty();
        let cx = lane_cx(r.lane);
        let color = if bad {
            RED
        } else {
            PALETTE[r.lane % PALETTE.len()]
        };
        let base = r.y + ROW_PAD + 12;
        let mid = base - 4;
        let num_fill = if bad { RED } else { "#333" };
        let _ = writeln!(
            o,
            "<text x=\"{}\" y=\"{base}\" text-anchor=\"end\" font-weight=\"bold\" \
             fill=\"{num_fill}\">{}.</text>",
            lanes_x - 10,
            i + 1
        );
        let _ = writeln!(
            o,
            "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"18\" fill=\"{color}\"/>",
            cx - 6,
            mid - 9
        );
        let (stroke, head) = if bad {
            (RED, "arrow-red")
        } else {
            ("#333", "arrow")
        };
        let _ = writeln!(
            o,
            "<path d=\"M{} {mid} H{}\" stroke=\"{stroke}\" fill=\"none\" \
             marker-end=\"url(#{head})\"/>",
            cx + 6,
            text_x - 6
        );
        let text_fill = if bad { RED } else { "#111" };
        let _ = writeln!(
            o,
            "<text x=\"{text_x}\" y=\"{base}\" fill=\"{text_fill}\">\
             <tspan font-weight=\"bold\">{}</tspan><tspan fill=\"#555\">{}</tspan></text>",
            esc(&r.main),
            esc(&r.details)
        );
        let mut ly = base;
        for c in &r.changes {
            ly += SMALL_LINE_H;
            let _ = writeln!(
                o,
                "<text x=\"{text_x}\" y=\"{ly}\" font-size=\"11\" fill=\"#444\">{}</text>",
                esc(c)
            );
        }
        for v in &r.violation {
            ly += LINE_H;
            let _ = writeln!(
                o,
                "<text x=\"{text_x}\" y=\"{ly}\" font-weight=\"bold\" fill=\"{RED}\">{}</text>",
                esc(v)
            );
        }
    }
    if rows.is_empty() {
        let _ = writeln!(
            o,
            "<text x=\"{lanes_x}\" y=\"{}\" fill=\"#555\">(no steps)</text>",
            rows_y + 12
        );
    }
    o.push_str("</svg>");
    o
}

fn marker(id: &str, color: &str) -> String {
    format!(
        "<marker id=\"{id}\" viewBox=\"0 0 8 8\" refX=\"8\" refY=\"4\" markerWidth=\"8\" \
         markerHeight=\"8\" orient=\"auto\"><path d=\"M0 0 L8 4 L0 8 z\" fill=\"{color}\"/>\
         </marker>\n"
    )
}

/// `s` escaped for XML text and attribute values; characters XML 1.0 forbids become U+FFFD,
/// and line breaks and tabs spaces.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}
