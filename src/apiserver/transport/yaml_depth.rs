//! A cheap scan of a YAML body for how deeply it nests, before any YAML parser sees it.
//! libyaml (under serde_yaml) spends time quadratic in the depth of flow collections, so a
//! 2 MB body of `[` × 1,000,000 costs seconds of CPU before serde_yaml's own recursion limit
//! (128) can refuse it. This scan is linear and refuses the same depth up front.
//!
//! It follows YAML's lexical rules closely enough for manifests — quoted scalars, comments,
//! block scalars (`|`, `>`), and that a `[` inside a plain scalar outside flow context does
//! not nest — and leans towards counting a bracket when unsure. It is a guard, not a parser:
//! the parser still runs off the async workers (`yaml_parse`) in case it is fooled.

/// serde_yaml's recursion limit: nothing deeper could be accepted anyway.
pub const MAX_DEPTH: usize = 128;

pub fn check(body: &[u8]) -> Result<(), String> {
    let too_deep = || format!("exceeded max depth of {MAX_DEPTH}");
    let mut depth = 0usize;
    // At a place where a node may start (so `[`, a quote, `|` begin something).
    let mut at_node = true;
    // Block indicators (`- `, `? `) in a row on this line: each opens a nested collection.
    let mut indicators = 0usize;
    let mut line_indent = 0usize;
    let mut i = 0usize;
    let n = body.len();
    let blank = |j: usize| j >= n || matches!(body[j], b' ' | b'\t' | b'\r' | b'\n');
    while i < n {
        let b = body[i];
        let after_space = i == 0 || matches!(body[i - 1], b' ' | b'\t' | b'\r' | b'\n');
        match b {
            b'\n' => {
                if depth == 0 {
                    at_node = true;
                }
                indicators = 0;
                i += 1;
                line_indent = body[i..].iter().take_while(|&&c| c == b' ').count();
                continue;
            }
            b' ' | b'\t' | b'\r' => {}
            b'#' if after_space => {
                i = body[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(n, |p| i + p);
                continue;
            }
            b'\'' | b'"' if at_node => {
                i = skip_quoted(body, i);
                at_node = false;
                continue;
            }
            b'[' | b'{' if depth > 0 || at_node => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(too_deep());
                }
                at_node = true;
            }
            b']' | b'}' if depth > 0 => {
                depth -= 1;
                at_node = false;
            }
            b',' if depth > 0 => at_node = true,
            b':' if blank(i + 1) || depth > 0 => at_node = true,
            b'-' | b'?' if at_node && depth == 0 && blank(i + 1) => {
                indicators += 1;
                if indicators > MAX_DEPTH {
                    return Err(too_deep());
                }
            }
            b'&' | b'!' if at_node => {
                // An anchor or tag: the node itself comes after it.
                while i < n && !blank(i) {
                    i += 1;
                }
                continue;
            }
            b'|' | b'>' if at_node && depth == 0 => {
                i = skip_block_scalar(body, i, line_indent);
                at_node = true;
                continue;
            }
            _ => at_node = false,
        }
        i += 1;
    }
    Ok(())
}

/// The index just past the quoted scalar that starts at `start`.
fn skip_quoted(body: &[u8], start: usize) -> usize {
    let q = body[start];
    let mut i = start + 1;
    while i < body.len() {
        match body[i] {
            b'\\' if q == b'"' => i += 2,
            c if c == q => {
                // '' is an escaped quote inside single quotes.
                if q == b'\'' && body.get(i + 1) == Some(&b'\'') {
                    i += 2;
                } else {
                    return i + 1;
                }
            }
            _ => i += 1,
        }
    }
    body.len()
}

/// The index of the first line after a block scalar's content: every following line that is
/// blank or indented more than the line holding the indicator.
fn skip_block_scalar(body: &[u8], start: usize, indent: usize) -> usize {
    let mut i = body[start..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(body.len(), |p| start + p);
    while i < body.len() {
        let line = i + 1;
        let spaces = body[line..].iter().take_while(|&&c| c == b' ').count();
        let rest = line + spaces;
        let empty = rest >= body.len() || matches!(body[rest], b'\n' | b'\r');
        if !empty && spaces <= indent {
            return i;
        }
        i = body[line..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(body.len(), |p| line + p);
    }
    body.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_deep_flow_and_compact_block_nesting() {
        let deep = "[".repeat(1_000_000);
        assert!(check(deep.as_bytes()).is_err());
        let nested = format!("a: {}1{}", "{b: ".repeat(200), "}".repeat(200));
        assert!(check(nested.as_bytes()).is_err());
        let list_in_list = format!("{}x", "[a, ".repeat(200));
        assert!(check(list_in_list.as_bytes()).is_err());
        let dashes = format!("{}x\n", "- ".repeat(200));
        assert!(check(dashes.as_bytes()).is_err());
        // Closing brackets hidden in a quoted scalar do not cancel real ones.
        let hidden = format!("[\"{}\", {}", "]".repeat(300), "[".repeat(200));
        assert!(check(hidden.as_bytes()).is_err());
    }

    #[test]
    fn accepts_manifests_and_brackets_that_do_not_nest() {
        let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app # a comment with [[[[\n  annotations:\n    a: \"[[[[[[\"\n    b: '{{{{ it''s }'\n    c: x[[[[[[[[\nspec:\n  containers:\n  - name: a\n    image: nginx\n    command: [sh, -c, \"echo [\"]\n    args:\n    - |\n      [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n      'not a quote\n    - >-\n      {{{{\n";
        assert_eq!(check(pod.as_bytes()), Ok(()));
        let wide = format!("items: [{}]", "{a: [1, 2]}, ".repeat(10_000));
        assert_eq!(check(wide.as_bytes()), Ok(()));
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(check(ok.as_bytes()), Ok(()));
    }
}
