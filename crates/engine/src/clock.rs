//! Monotonic microsecond clock, as pgbench's `pg_time_usec_t`, plus the shift to Unix time
//! for logs and `--progress-timestamp`.

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// The monotonic clock's reading at the origin and the Unix time then, µs.
static ORIGIN: OnceLock<(i64, i64)> = OnceLock::new();

/// CLOCK_MONOTONIC in µs: one vDSO call and two multiplications, a third of what
/// `Instant::elapsed` + `as_micros` cost (read several times per transaction).
#[inline]
fn monotonic_us() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we own; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    // time_t and c_long are i64 on the 64-bit Linux targets hotbench runs on.
    ts.tv_sec * 1_000_000 + ts.tv_nsec / 1000
}

fn origin() -> &'static (i64, i64) {
    ORIGIN.get_or_init(|| {
        let unix_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0);
        (monotonic_us(), unix_us)
    })
}

/// Microseconds since an arbitrary process-wide origin (monotonic).
#[inline]
pub fn now_us() -> i64 {
    let base = origin().0;
    monotonic_us() - base
}

/// Converts a monotonic timestamp to Unix time in microseconds.
pub fn to_unix_us(t: i64) -> i64 {
    origin().1 + t
}

/// Current Unix time in microseconds, from the wall clock (what `--start-at` refers to).
pub fn unix_now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// Sleeps until the wall clock reads `at` (Unix µs), waking every 50 ms to check `stop`.
/// Returns how late the caller already was (µs; 0 when it waited).
pub fn wait_until_unix_us(at: i64, stop: impl Fn() -> bool) -> i64 {
    let late = unix_now_us() - at;
    if late >= 0 {
        return late;
    }
    loop {
        let left = at - unix_now_us();
        if left <= 0 || stop() {
            return 0;
        }
        std::thread::sleep(std::time::Duration::from_micros(left.min(50_000) as u64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_and_unix_shift() {
        let a = now_us();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = now_us();
        assert!(b - a >= 2000);
        let unix_now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_micros() as i64;
        assert!((to_unix_us(b) - unix_now).abs() < 1_000_000);
    }
}
