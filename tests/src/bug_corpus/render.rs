//! `docs/bug-corpus.md`'s tables, rendered from the corpus.

use std::fmt::Write as _;

use super::{Find, BUGS, GAPS, UPSTREAM_BUGS};

/// The tables of `docs/bug-corpus.md` (between its `corpus:begin` and `corpus:end` marks):
/// the planted bugs, the bugs Upstream reproduces, and the gaps.
pub fn render() -> String {
    let mut out = String::new();
    let cell = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let sources = |sources: &[&str]| {
        sources
            .iter()
            .map(|s| match s.strip_prefix("https://") {
                Some(rest) => format!("[{rest}]({s})"),
                None => (*s).to_owned(),
            })
            .collect::<Vec<_>>()
            .join("<br>")
    };
    let finds = |finds: &[Find]| {
        finds
            .iter()
            .map(|f| format!("{} — `{}`", f.checker, f.test))
            .collect::<Vec<_>>()
            .join("<br>")
    };
    let _ = writeln!(
        out,
        "## Planted in gangway's code and found ({} bugs)\n",
        BUGS.len()
    );
    out.push_str("| # | bug | what went wrong there | planted as | breaks | found by |\n");
    out.push_str("|---|---|---|---|---|---|\n");
    for (n, bug) in BUGS.iter().enumerate() {
        let _ = writeln!(
            out,
            "| {} | **{}**<br>{} | {} | `{}`: {} | {} | {} |",
            n + 1,
            bug.id,
            sources(bug.sources),
            cell(bug.upstream),
            bug.flaw,
            cell(bug.planted),
            bug.breaks,
            finds(bug.found_by)
        );
    }
    let _ = writeln!(
        out,
        "\n## Reproduced by `Mode::Upstream` ({} bugs)\n",
        UPSTREAM_BUGS.len()
    );
    out.push_str("| bug | what went wrong there | found by | Hardened |\n");
    out.push_str("|---|---|---|---|\n");
    for bug in UPSTREAM_BUGS {
        let _ = writeln!(
            out,
            "| **{}**<br>{} | {} | {} | {} |",
            cell(bug.id),
            sources(bug.sources),
            cell(bug.upstream),
            finds(&[bug.found_by]),
            cell(bug.hardened)
        );
    }
    let _ = writeln!(out, "\n## Not reproduced yet ({} entries)\n", GAPS.len());
    out.push_str("| bug | what went wrong there | why not, and what closes it |\n");
    out.push_str("|---|---|---|\n");
    for gap in GAPS {
        let _ = writeln!(
            out,
            "| **{}**<br>{} | {} | {} |",
            cell(gap.id),
            sources(gap.sources),
            cell(gap.upstream),
            cell(gap.why)
        );
    }
    out
}
