//! The captured gaps for a fix's statements that cannot be spliced one to one into the
//! captured body (a claim logged through a CTE, its follow-up under `\if :hotbench_claimed`)
//! but still run as many statements in the same order: each captured `\sleep` goes before
//! the same statement of the fix, so the think time falls where it fell. Slept all at once
//! before BEGIN instead, a kombu consumer held its claimed row for its round trips only, not
//! for the 4.5 ms it idles between the claim and its UPDATE, and the twin's consumers hardly
//! queued (22 ms a get where the original's took 79). Pure.

/// Per line of `text`: `Some(k)` where statement `k` starts (a statement ends at a line
/// ending in `;` or at its `\gset`; backslash lines and comments between statements are
/// not statements), and the number of statements.
fn starts(text: &str) -> (Vec<Option<usize>>, usize) {
    let (mut out, mut inside, mut k) = (Vec::new(), false, 0);
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('\\') {
            if t == "\\gset" && inside {
                inside = false;
                k += 1;
            }
            out.push(None);
            continue;
        }
        if !inside && (t.is_empty() || t.starts_with("--")) {
            out.push(None);
            continue;
        }
        out.push((!inside).then_some(k));
        inside = true;
        if t.ends_with(';') {
            inside = false;
            k += 1;
        }
    }
    (out, k)
}

/// The captured sleeps (µs) before each of the `n` statements of a captured body; `None`
/// when it has conditions (`\if`: the fix's own conditions differ) or another count.
pub fn gaps_before(body: &str, n: usize) -> Option<Vec<u64>> {
    if body.lines().any(|l| l.trim().starts_with("\\if ")) {
        return None;
    }
    let (starts, count) = starts(body);
    if count != n {
        return None;
    }
    let mut gaps = vec![0u64; n];
    let mut pending = 0u64;
    for (line, start) in body.lines().zip(starts) {
        if let Some(us) = line
            .trim()
            .strip_prefix("\\sleep ")
            .and_then(|r| r.strip_suffix(" us"))
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            pending += us;
        }
        if let Some(k) = start {
            gaps[k] = std::mem::take(&mut pending);
        }
    }
    Some(gaps)
}

/// `text` with each gap slept right before its statement (inside the fix's own `\if` when
/// the statement is under one); `None` when the statements do not number as many.
pub fn spread(text: &str, gaps: &[u64]) -> Option<String> {
    let (starts, count) = starts(text);
    if count != gaps.len() {
        return None;
    }
    let mut out = String::new();
    for (line, start) in text.lines().zip(starts) {
        if let Some(us) = start.and_then(|k| gaps.get(k)).filter(|us| **us > 0) {
            out.push_str(&format!("\\sleep {us} us\n"));
        }
        out.push_str(line);
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPTURED: &str = "BEGIN;\n-- 1.0 ms idle in the transaction here\n\\sleep 1000 us\nSELECT q FROM kombu_queue LIMIT 1;\n-- 3.4 ms between the statements\n\\sleep 3400 us\nSELECT id FROM m ORDER BY t LIMIT 1 FOR UPDATE\n\\gset\n\\sleep 4500 us\nUPDATE m SET visible = false WHERE id = :id;\n\\sleep 1000 us\nCOMMIT;\n";
    const FIX: &str = "BEGIN;\nSELECT q FROM kombu_queue LIMIT 1;\nwith hotbench_claim as (\nSELECT id FROM m ORDER BY t LIMIT 1 FOR UPDATE\n), hotbench_claim_log as (\n insert into hotbench_claims (claimed) select 1 from hotbench_claim\n)\nselect count(*) as hotbench_claimed from hotbench_claim\n\\gset\n\\if :hotbench_claimed\nUPDATE m SET visible = false WHERE id = :id;\n\\endif\nCOMMIT;\n";

    #[test]
    fn each_gap_is_slept_before_the_same_statement_of_the_fix() {
        let gaps = gaps_before(CAPTURED, 5).expect("five statements, no condition");
        assert_eq!(gaps, [0, 1000, 3400, 4500, 1000]);
        let s = spread(FIX, &gaps).expect("five statements");
        // The consumer idles holding its claimed row: after the claim, before its UPDATE.
        assert!(
            s.contains("\\gset\n\\if :hotbench_claimed\n\\sleep 4500 us\nUPDATE m"),
            "{s}"
        );
        assert!(
            s.contains("\\sleep 3400 us\nwith hotbench_claim as (\n"),
            "{s}"
        );
        assert!(s.starts_with("BEGIN;\n\\sleep 1000 us\nSELECT q"), "{s}");
        assert!(s.ends_with("\\endif\n\\sleep 1000 us\nCOMMIT;\n"), "{s}");
    }

    #[test]
    fn conditions_or_another_count_of_statements_are_not_spread() {
        assert_eq!(gaps_before(CAPTURED, 4), None);
        assert_eq!(
            gaps_before("BEGIN;\n\\if :x\nSELECT 1;\n\\endif\nCOMMIT;\n", 3),
            None
        );
        assert_eq!(spread(FIX, &[0, 0, 0]), None);
    }
}
