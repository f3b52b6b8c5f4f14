//! Tests for the counterexample timeline: the text printer, the SVG writer and the JSON.

use super::timeline::{Step, Timeline};

/// A 4-step counterexample in which the timer rejects one member after another passed Permit.
fn sample() -> Timeline {
    let mut t = Timeline::new("I3 violated after 4 steps");
    t.push(
        Step::new("scheduler", "reserve")
            .with_pod("trainer-0")
            .with_gang("ml/trainer")
            .with_change("trainer-0: assumed on node-0"),
    );
    t.push(
        Step::new("scheduler", "permit: wait")
            .with_pod("trainer-1")
            .with_gang("ml/trainer")
            .with_change("trainer-1: waiting (2 of 3)"),
    );
    t.push(
        Step::new("timer", "permit deadline passed")
            .with_pod("trainer-1")
            .with_gang("ml/trainer")
            .with_change("trainer-1 rejected"),
    );
    t.push(
        Step::new("binder-1", "bind")
            .with_pod("trainer-0")
            .with_gang("ml/trainer")
            .with_change("trainer-0: bound to node-0")
            .with_violation("I3: 1 of 3 members passed Permit"),
    );
    t
}

fn text(t: &Timeline) -> String {
    let mut buf = Vec::new();
    let r = t.write_text(&mut buf);
    assert!(r.is_ok());
    String::from_utf8(buf).unwrap_or_default()
}

#[test]
fn text_is_numbered_aligned_and_marks_the_violation() {
    let out = text(&sample());
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "I3 violated after 4 steps",
            " 1. scheduler  trainer-0  gang ml/trainer  reserve → trainer-0: assumed on node-0",
            " 2. scheduler  trainer-1  gang ml/trainer  permit: wait → trainer-1: waiting (2 of 3)",
            " 3. timer      trainer-1  gang ml/trainer  permit deadline passed → trainer-1 rejected",
            " 4. binder-1   trainer-0  gang ml/trainer  bind → trainer-0: bound to node-0",
            "   ✗ I3: 1 of 3 members passed Permit",
        ]
    );
    // The action column starts at the same character on every step line.
    let actions = [
        "reserve",
        "permit: wait",
        "permit deadline passed",
        "bind →",
    ];
    let cols: Vec<Option<usize>> = lines[1..5]
        .iter()
        .zip(actions)
        .map(|(l, a)| l.find(a))
        .collect();
    assert!(
        cols.iter().all(|&c| c.is_some() && c == cols[0]),
        "{cols:?}"
    );
    assert_eq!(out, sample().to_string(), "Display prints the same text");
}

#[test]
fn text_omits_empty_columns_and_dashes_missing_fields() {
    let mut t = Timeline::new("t");
    t.push(Step::new("cluster", "node added").with_change("node-1: 8 cpu"));
    t.push(Step::new("scheduler", "pop").with_pod("a"));
    let out = text(&t);
    assert_eq!(
        out,
        "t\n 1. cluster    -  node added → node-1: 8 cpu\n 2. scheduler  a  pop\n"
    );
    assert!(!out.contains("gang"), "no step has a gang: no gang column");

    assert_eq!(text(&Timeline::new("empty")), "empty\n    (no steps)\n");
}

#[test]
fn text_wraps_a_long_change_list_under_the_action_column() {
    let mut step = Step::new("scheduler", "permit: allow gang")
        .with_pod("trainer-0")
        .with_gang("ml/trainer");
    for i in 0..8 {
        step = step.with_change(format!("trainer-{i}: allowed on node-{i}"));
    }
    let mut t = Timeline::new("wrap");
    t.push(step);
    let out = text(&t);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() > 3, "{out}");
    let head = lines[1];
    let col = head.find("permit: allow gang").unwrap_or(usize::MAX);
    assert!(head.starts_with(" 1. scheduler  trainer-0  gang ml/trainer  permit: allow gang → "));
    for l in &lines[1..] {
        assert!(l.chars().count() <= 100, "line too long: {l:?}");
        assert!(!l.ends_with(' '), "trailing space: {l:?}");
    }
    for l in &lines[2..] {
        // Continuation lines are indented to the action column and start with a change.
        assert_eq!(l.len() - l.trim_start().len(), col, "{l:?}");
        assert!(l.trim_start().starts_with("trainer-"), "{l:?}");
    }
    // Nothing was lost: joined back together it is the action, an arrow and the changes.
    let joined: Vec<&str> = lines[1..].iter().map(|l| l.trim()).collect();
    let joined = joined.join(" ");
    let changes: Vec<String> = (0..8)
        .map(|i| format!("trainer-{i}: allowed on node-{i}"))
        .collect();
    assert!(joined.ends_with(&format!("permit: allow gang → {}", changes.join("; "))));
}

#[test]
fn text_wraps_a_single_overlong_change_between_words() {
    let mut t = Timeline::new("wrap");
    t.push(Step::new("a", "x").with_change("word ".repeat(40)));
    let out = text(&t);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() >= 3, "{out}");
    assert!(lines.iter().all(|l| l.chars().count() <= 100));
    assert_eq!(out.matches("word").count(), 40);
}

#[test]
fn text_keeps_each_step_on_its_own_lines() {
    let mut t = Timeline::new("a\ntitle");
    t.push(Step::new("x\ny", "do\nit"));
    assert_eq!(text(&t), "a title\n 1. x y  do it\n");
}

#[test]
fn svg_is_a_sequence_diagram() {
    let t = sample();
    let svg = t.to_svg();
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(svg.ends_with("</svg>"), "{svg}");
    assert!(svg.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.contains("font-family=\"monospace\" font-size=\"12\""));
    // One lifeline per distinct actor, labelled in order of first appearance.
    assert_eq!(svg.matches("<line").count(), 3);
    let at = |s: &str| svg.find(&format!(">{s}</text>")).unwrap_or(usize::MAX);
    assert!(at("scheduler") < at("timer") && at("timer") < at("binder-1"));
    // Every step is numbered; actions, pods, gangs and changes are drawn.
    for n in 1..=4 {
        assert!(svg.contains(&format!(">{n}.</text>")), "step {n}");
    }
    assert!(svg.contains(">permit deadline passed</tspan>"));
    assert!(svg.contains("  pod trainer-1  gang ml/trainer"));
    assert!(svg.contains("· trainer-1 rejected"));
    // The violation is red, with its message.
    assert!(svg.contains("#c00"));
    assert!(svg.contains("✗ I3: 1 of 3 members passed Permit"));
    assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
    assert_eq!(svg.matches("<svg").count(), 1);
}

#[test]
fn svg_without_a_violation_has_no_red() {
    let mut t = sample();
    for s in &mut t.steps {
        s.violation = None;
    }
    assert!(!t.to_svg().contains("#c00"));
}

#[test]
fn svg_escapes_text() {
    let mut t = Timeline::new("a & b");
    t.push(
        Step::new("<actor>", "say \"hi\" & 'bye'")
            .with_pod("<script>alert(1)</script>")
            .with_change("x\u{1}y"),
    );
    let svg = t.to_svg();
    assert!(!svg.contains("<script>"));
    assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(svg.contains("&lt;actor&gt;"));
    assert!(svg.contains("say &quot;hi&quot; &amp; &apos;bye&apos;"));
    assert!(svg.contains("<title>a &amp; b</title>"));
    assert!(
        !svg.contains('\u{1}'),
        "control characters are not valid XML"
    );
}

#[test]
fn svg_is_deterministic_and_sized_by_actors_and_steps() {
    let t = sample();
    assert_eq!(t.to_svg(), t.to_svg());
    assert_eq!(t.to_svg(), t.clone().to_svg());

    let size = |svg: &str| -> (usize, usize) {
        let num = |attr: &str| {
            svg.split(&format!(" {attr}=\""))
                .nth(1)
                .and_then(|s| s.split('"').next())
                .and_then(|s| s.parse().ok())
                .unwrap_or(0)
        };
        (num("width"), num("height"))
    };
    let (w, h) = size(&t.to_svg());
    let mut more = t.clone();
    more.push(Step::new("cluster", "node removed").with_change("node-0 gone"));
    let (w2, h2) = size(&more.to_svg());
    assert!(w2 > w, "another actor widens the diagram: {w} -> {w2}");
    assert!(h2 > h, "another step lengthens it: {h} -> {h2}");

    let empty = Timeline::new("nothing").to_svg();
    assert!(empty.starts_with("<svg") && empty.ends_with("</svg>"));
    assert_eq!(empty.matches("<line").count(), 0);
}

#[test]
fn json_round_trips() {
    let t = sample();
    let json = t.to_json();
    assert!(json.contains("\"actor\""));
    assert!(json.contains("\"violation\": \"I3: 1 of 3 members passed Permit\""));
    let back: Result<Timeline, _> = serde_json::from_str(&json);
    assert_eq!(back.ok(), Some(t));
}
