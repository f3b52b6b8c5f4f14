//! Source positions for workload error messages: lines and columns from byte offsets, and the
//! field path (like `pods[3].cpu_millis`) at a position in a TOML or JSON workload.
//!
//! The scanners are deliberately shallow — they follow table headers, nesting, keys and array
//! indices, not the full grammars — and only run once a parse has already failed.

use std::fmt::Write as _;

/// Joins the container path at the error with the field the message names, if any.
pub(super) fn field_path(path: String, message: &str) -> Option<String> {
    let named = ["missing field `", "unknown field `", "duplicate field `"]
        .iter()
        .find_map(|p| message.strip_prefix(p))
        .and_then(|rest| rest.split('`').next());
    let path = match named {
        Some(name) if path.is_empty() => name.to_owned(),
        Some(name) if !(path == name || path.ends_with(&format!(".{name}"))) => {
            format!("{path}.{name}")
        }
        _ => path,
    };
    (!path.is_empty()).then_some(path)
}

/// Byte offset of the start of 1-based `line`.
pub(super) fn line_start(src: &str, line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    src.match_indices('\n')
        .nth(line - 2)
        .map_or(src.len(), |(i, _)| i + 1)
}

/// 1-based line and column (in characters) of a byte offset.
pub(super) fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let offset = floor_char_boundary(src, offset);
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn floor_char_boundary(src: &str, mut offset: usize) -> usize {
    offset = offset.min(src.len());
    while !src.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// `[[name]]` or `[name]` → the table name and whether it is an array of tables.
fn toml_header(line: &str) -> Option<(&str, bool)> {
    let line = line.split('#').next().unwrap_or("").trim();
    if let Some(inner) = line.strip_prefix("[[").and_then(|l| l.strip_suffix("]]")) {
        Some((inner.trim(), true))
    } else {
        line.strip_prefix('[')
            .and_then(|l| l.strip_suffix(']'))
            .map(|t| (t.trim(), false))
    }
}

/// The path of the TOML field at byte `offset`: the enclosing `[[table]]` with its index, then
/// the key before `=` on the same line.
pub(super) fn toml_path_at(src: &str, offset: usize) -> String {
    let offset = floor_char_boundary(src, offset);
    let mut counts: Vec<(&str, usize)> = Vec::new();
    let mut table = String::new();
    let line_begin = line_start(src, line_col(src, offset).0);
    let line_end = src[offset..].find('\n').map_or(src.len(), |i| offset + i);
    // Headers up to and including the error's line (a missing field points at the header).
    for line in src[..line_end].lines() {
        if let Some((name, is_array)) = toml_header(line) {
            table = if is_array {
                let n = match counts.iter_mut().find(|(t, _)| *t == name) {
                    Some((_, n)) => {
                        *n += 1;
                        *n
                    }
                    None => {
                        counts.push((name, 0));
                        0
                    }
                };
                format!("{name}[{n}]")
            } else {
                name.to_owned()
            };
        }
    }
    // The key: the one whose `=` precedes the offset on its line (inline tables have several),
    // or, when the offset is at a key (e.g. an unknown field), that key.
    let seg = src[line_begin..offset]
        .rsplit([',', '{'])
        .next()
        .unwrap_or("");
    let key = match seg.split_once('=') {
        Some((key, _)) => key,
        None => src[offset..line_end]
            .split_once('=')
            .map_or("", |(key, _)| key),
    };
    let key = key.trim().trim_matches('"');
    match (table.is_empty(), key.is_empty()) {
        (_, true) => table,
        (true, false) => key.to_owned(),
        (false, false) => format!("{table}.{key}"),
    }
}

/// The line of the field `path` (like `pods[3].group`) of the `index`th item of `list`: the
/// field's `key =` line inside the `index`th `[[list]]` table, else that table's header line.
/// `None` unless the list is written with one `[[list]]` header per item (`len` items).
pub(super) fn toml_field_line(
    src: &str,
    list: &str,
    index: usize,
    len: usize,
    path: &str,
) -> Option<usize> {
    let lines: Vec<&str> = src.lines().collect();
    let headers: Vec<usize> = (0..lines.len())
        .filter(|&i| toml_header(lines[i]) == Some((list, true)))
        .collect();
    if headers.len() != len {
        return None;
    }
    let header = *headers.get(index)?;
    let key = path.rsplit('.').next().unwrap_or(path);
    let field = lines[header + 1..]
        .iter()
        .take_while(|l| toml_header(l).is_none())
        .position(|l| {
            l.split_once('=')
                .is_some_and(|(k, _)| k.trim().trim_matches('"') == key)
        });
    Some(header + 1 + field.map_or(0, |f| f + 1))
}

enum Frame {
    Object { key: Option<String>, want_key: bool },
    Array { index: usize },
}

fn render_path(stack: &[Frame]) -> String {
    let mut s = String::new();
    for frame in stack {
        match frame {
            Frame::Object { key: Some(k), .. } => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Frame::Object { key: None, .. } => {}
            Frame::Array { index } => {
                let _ = write!(s, "[{index}]");
            }
        }
    }
    s
}

/// Walks JSON tokens (leniently: it only tracks nesting, keys and indices), calling `visit`
/// with each token's offset, whether a value starts there, and the stack before the token.
/// Stops when `visit` returns true; returns the stack at that point.
fn json_walk(src: &str, mut visit: impl FnMut(usize, bool, &[Frame]) -> bool) -> Vec<Frame> {
    let bytes = src.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let is_key = matches!(stack.last(), Some(Frame::Object { want_key: true, .. }));
        let value_start = !is_key && !matches!(c, b',' | b':' | b'}' | b']');
        if visit(i, value_start, &stack) {
            break;
        }
        let start = i;
        i += 1;
        match c {
            b'{' => stack.push(Frame::Object {
                key: None,
                want_key: true,
            }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { key, want_key }) => {
                    *key = None;
                    *want_key = true;
                }
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            b'"' => {
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(bytes.len());
                if let Some(Frame::Object {
                    key,
                    want_key: want @ true,
                }) = stack.last_mut()
                {
                    let raw = src.get(start + 1..i.saturating_sub(1)).unwrap_or("");
                    *key = Some(raw.to_owned());
                    *want = false;
                }
            }
            _ => {
                while i < bytes.len() && !b",:{}[]\" \t\r\n".contains(&bytes[i]) {
                    i += 1;
                }
            }
        }
    }
    stack
}

/// The path of the JSON value being read when the parser stopped at byte `end` (exclusive).
pub(super) fn json_path_at(src: &str, end: usize) -> String {
    render_path(&json_walk(src, |at, _, _| at >= end))
}

/// Byte offset where the JSON value at `path` (like `pods[3]` or `pods[3].group`) starts.
pub(super) fn json_value_offset(src: &str, path: &str) -> Option<usize> {
    let mut found = None;
    json_walk(src, |at, value_start, stack| {
        let hit = value_start && render_path(stack) == path;
        if hit {
            found = Some(at);
        }
        hit
    });
    found
}
