//! libpq's error position context (`reportErrorPosition` in fe-protocol3.c): the line of the
//! query holding the error's position, cut to 60 columns around it, and a caret under the
//! character. pgbench prints it under a server error; hotbench prints it the same way.

/// Screen width limit, and how far to try to keep the position from a cut end (libpq's).
const DISPLAY_SIZE: usize = 60;
const MIN_RIGHT_CUT: usize = 10;

/// `LINE n: <text>\n<spaces>^\n` for the 1-based character `position` of `query`, or
/// `None` when the position is outside it. Tabs show as spaces; `\r\n` is one line break.
/// Characters count one column each (libpq's behaviour for single-byte widths).
pub fn lines(query: &str, position: u32) -> Option<String> {
    let loc = (position as usize).checked_sub(1)?;
    let chars: Vec<char> = query
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    let mut loc_line = 1;
    let mut ibeg = 0;
    let mut iend = None;
    for (cno, &ch) in chars.iter().enumerate() {
        if ch == '\r' || ch == '\n' {
            if cno < loc {
                if ch == '\r' || cno == 0 || chars[cno - 1] != '\r' {
                    loc_line += 1;
                }
                ibeg = cno + 1;
            } else {
                iend = Some(cno);
                break;
            }
        }
    }
    let n = chars.len();
    let mut iend = iend.unwrap_or(n);
    if loc > n {
        return None;
    }
    let (mut beg_trunc, mut end_trunc) = (false, false);
    if iend - ibeg > DISPLAY_SIZE {
        if ibeg + DISPLAY_SIZE >= loc + MIN_RIGHT_CUT {
            while iend - ibeg > DISPLAY_SIZE {
                iend -= 1;
            }
            end_trunc = true;
        } else {
            while loc + MIN_RIGHT_CUT < iend {
                iend -= 1;
                end_trunc = true;
            }
            while iend - ibeg > DISPLAY_SIZE {
                ibeg += 1;
                beg_trunc = true;
            }
        }
    }
    let mut prefix = format!("LINE {loc_line}: ");
    if beg_trunc {
        prefix.push_str("...");
    }
    let width = prefix.chars().count() + loc - ibeg;
    let mut out = prefix;
    out.extend(&chars[ibeg..iend]);
    if end_trunc {
        out.push_str("...");
    }
    out.push('\n');
    out.push_str(&" ".repeat(width));
    out.push_str("^\n");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As psql 15.18 printed them for these queries (its output pasted).
    #[test]
    fn the_line_and_caret_match_libpq() {
        assert_eq!(
            lines("select * from nosuch;", 15).as_deref(),
            Some("LINE 1: select * from nosuch;\n                      ^\n")
        );
        // relation "t" does not exist, in the second statement of one simple query.
        assert_eq!(
            lines("select 1;\nselect\tx from t;", 25).as_deref(),
            Some("LINE 2: select x from t;\n                      ^\n")
        );
        assert_eq!(lines("select 1", 0), None);
        assert_eq!(lines("select 1", 99), None);
        // syntax error at or near "from", cut on both sides.
        let long = format!("select {} from t where nosuch = 1", "a, ".repeat(40));
        assert_eq!(
            lines(&long, 129).as_deref(),
            Some(concat!(
                "LINE 1: ... a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a,  from t whe...\n",
                "                                                             ^\n"
            ))
        );
    }
}
