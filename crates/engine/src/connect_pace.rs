//! How many connection start-ups a worker keeps in flight, adapted to the server as TCP Vegas
//! adapts to a path: start with two, and after each round of completions compare the recent
//! start-up latency with the fastest seen. Near the fastest, the server has room: one more in
//! flight (doubling at first, like slow start). Well above it, start-ups queue in the
//! postmaster or for the server's cores: one fewer. So a small machine whose server is
//! saturated by two start-ups gets two or three (not eight, which only compete with the server
//! for its cores), and a large one as many as its cores take, up to the maximum.
//! Pure arithmetic, unit-tested; `connect_phase.rs` does the waiting.

/// Start-ups in flight at first: few enough that the first latencies show an unqueued server
/// (the baseline every later round is compared with; starting wider on a small server would
/// take queueing for the baseline and never narrow).
const START: usize = 2;
/// Recent latency up to this multiple of the fastest: the server keeps up, widen.
const WIDEN_BELOW: f64 = 1.5;
/// Recent latency beyond this multiple of the fastest: start-ups queue, narrow.
const NARROW_ABOVE: f64 = 2.5;
/// Weight of the newest latency in the recent average.
const ALPHA: f64 = 0.3;

#[derive(Debug, Clone)]
pub struct Pacer {
    /// Start-ups allowed in flight now.
    pub limit: usize,
    max: usize,
    in_flight: usize,
    /// The most in flight at once so far.
    pub peak: usize,
    fastest_us: f64,
    recent_us: f64,
    /// Completions since the limit last changed.
    since_change: usize,
    /// Still doubling (no sign of queueing yet).
    slow_start: bool,
}

impl Pacer {
    /// At most `max` start-ups in flight.
    pub fn new(max: usize) -> Self {
        let max = max.max(1);
        Pacer {
            limit: START.min(max),
            max,
            in_flight: 0,
            peak: 0,
            fastest_us: f64::INFINITY,
            recent_us: 0.0,
            since_change: 0,
            slow_start: true,
        }
    }

    /// Takes a slot for one start-up if the limit allows.
    pub fn try_start(&mut self) -> bool {
        if self.in_flight >= self.limit {
            return false;
        }
        self.in_flight += 1;
        self.peak = self.peak.max(self.in_flight);
        true
    }

    /// Start-ups that may begin now.
    pub fn room(&self) -> usize {
        self.limit.saturating_sub(self.in_flight)
    }

    /// A slot taken by `try_start` was not used after all.
    pub fn unused(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// A start-up that took `latency_us` ended (successfully or not).
    pub fn done(&mut self, latency_us: f64) {
        self.in_flight = self.in_flight.saturating_sub(1);
        let lat = latency_us.max(1.0);
        self.fastest_us = self.fastest_us.min(lat);
        self.recent_us = if self.recent_us == 0.0 {
            lat
        } else {
            ALPHA * lat + (1.0 - ALPHA) * self.recent_us
        };
        self.since_change += 1;
        // One decision per round: as many completions as the limit.
        if self.since_change < self.limit {
            return;
        }
        self.since_change = 0;
        let ratio = self.recent_us / self.fastest_us;
        if ratio <= WIDEN_BELOW {
            self.limit = if self.slow_start {
                self.limit * 2
            } else {
                self.limit + 1
            }
            .min(self.max);
        } else {
            self.slow_start = false;
            if ratio > NARROW_ABOVE && self.limit > 1 {
                self.limit -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that starts `cores` back ends at once in `service_us` each: with `k` in
    /// flight a start-up takes `service_us * max(1, k / cores)`. Returns the limit reached.
    fn settle(cores: usize, max: usize) -> Pacer {
        let mut p = Pacer::new(max);
        for _ in 0..500 {
            while p.try_start() {}
            let k = p.in_flight;
            let lat = 3000.0 * (k as f64 / cores as f64).max(1.0);
            for _ in 0..k {
                p.done(lat);
            }
        }
        p
    }

    #[test]
    fn a_two_core_server_gets_about_two_start_ups_at_once() {
        let p = settle(2, 16);
        assert!((2..=4).contains(&p.limit), "limit {}", p.limit);
    }

    #[test]
    fn a_sixteen_core_server_gets_many() {
        let p = settle(16, 32);
        assert!((16..=32).contains(&p.limit), "limit {}", p.limit);
        assert!(p.peak >= 16);
    }

    #[test]
    fn never_above_the_maximum_nor_below_one() {
        let p = settle(64, 8);
        assert_eq!(p.limit, 8);
        let mut p = Pacer::new(8);
        for i in 0..200 {
            assert!(p.try_start());
            // Ever slower: the server is drowning.
            p.done(1000.0 * (i + 1) as f64);
        }
        assert_eq!(p.limit, 1);
        assert!(!Pacer::new(0).try_start() || Pacer::new(0).limit == 1);
    }
}
