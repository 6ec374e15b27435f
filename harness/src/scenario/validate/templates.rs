//! Op templates: `{A..B}` and `{seq}` placeholders in string values.

/// Fill a workload op template: in string values, `{A..B}` becomes a number drawn
/// by `draw(A, B)` and `{seq}` the op's sequence number.
pub fn expand_template(
    template: &serde_json::Value,
    draw: &mut dyn FnMut(i64, i64) -> i64,
    seq: u64,
) -> Result<serde_json::Value, String> {
    use serde_json::Value as J;
    Ok(match template {
        // A string that is one placeholder and nothing else becomes a number.
        J::String(text) if is_single_placeholder(text) => {
            let n = expand_string(text, draw, seq)?;
            n.parse::<i64>().map(J::from).unwrap_or(J::String(n))
        }
        J::String(text) => J::String(expand_string(text, draw, seq)?),
        J::Object(map) => {
            let mut out = serde_json::Map::new();
            for (k, v) in map {
                out.insert(k.clone(), expand_template(v, draw, seq)?);
            }
            J::Object(out)
        }
        J::Array(items) => J::Array(
            items
                .iter()
                .map(|v| expand_template(v, draw, seq))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

fn expand_string(
    text: &str,
    draw: &mut dyn FnMut(i64, i64) -> i64,
    seq: u64,
) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| format!("unclosed `{{` in template `{text}`"))?
            + open;
        let inner = &rest[open + 1..close];
        if inner == "seq" {
            out.push_str(&seq.to_string());
        } else if let Some((lo, hi)) = inner.split_once("..") {
            let (Ok(lo), Ok(hi)) = (lo.trim().parse::<i64>(), hi.trim().parse::<i64>()) else {
                return Err(format!(
                    "`{{{inner}}}` in `{text}` is not a range like {{1..5}}"
                ));
            };
            if lo > hi {
                return Err(format!("range `{{{inner}}}` in `{text}` is empty"));
            }
            out.push_str(&draw(lo, hi).to_string());
        } else {
            return Err(format!(
                "unknown placeholder `{{{inner}}}` in `{text}`; use {{A..B}} or {{seq}}"
            ));
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn is_single_placeholder(text: &str) -> bool {
    text.starts_with('{') && text.ends_with('}') && text.matches('{').count() == 1
}
