//! COPY text rows for `pgbench_accounts`, written into a reused buffer without
//! allocating or going through `fmt`: `aid \t bid \t 0 \t <empty filler> \n`, exactly
//! pgbench's `INT64_FORMAT "\t" INT64_FORMAT "\t%d\t\n"`.

/// Appends the decimal digits of `v`.
#[inline]
pub fn push_u64(buf: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// The bytes after `aid` for every account of branch `bid`: `\t{bid}\t0\t\n`.
pub fn account_suffix(bid: u64) -> Vec<u8> {
    let mut s = b"\t".to_vec();
    push_u64(&mut s, bid);
    s.extend_from_slice(b"\t0\t\n");
    s
}

/// Appends one account row.
#[inline]
pub fn push_account(buf: &mut Vec<u8>, aid: u64, suffix: &[u8]) {
    push_u64(buf, aid);
    buf.extend_from_slice(suffix);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_match_pgbench_format() {
        let mut b = Vec::new();
        push_account(&mut b, 1, &account_suffix(1));
        push_account(&mut b, 100_001, &account_suffix(2));
        push_u64(&mut b, 0);
        push_u64(&mut b, u64::MAX);
        assert_eq!(
            String::from_utf8(b).unwrap(),
            "1\t1\t0\t\n100001\t2\t0\t\n018446744073709551615"
        );
    }
}
