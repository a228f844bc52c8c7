//! Latency monitoring state: the per-event time series of the latency
//! monitor (LATENCY LATEST/HISTORY/GRAPH/RESET, fed when a command takes at
//! least `latency-monitor-threshold` ms) and the per-command latency
//! histograms (LATENCY HISTOGRAM, INFO latencystats).
//!
//! The histogram is recorded in clock ticks, so the per-command cost is a
//! leading-zero count and an increment: 16 linear sub-buckets per power of
//! two (about 6% resolution), allocated at a command's first call. Reports convert ticks to nanoseconds and then
//! round to the value HdrHistogram with 2 significant digits (what Redis
//! uses) would print, so replies look like Redis's.
use std::collections::BTreeMap;

use super::clock;

/// Samples kept per event (one per second at most).
const SERIES_LEN: usize = 160;
/// Linear sub-buckets per power of two, as a shift.
const SUB_BITS: u32 = 4;
const SUB: usize = 1 << SUB_BITS;
/// Every power of two of a u64 has its row, so `bucket` needs no clamp.
const BUCKETS: usize = (64 - SUB_BITS) as usize * SUB;
/// Redis's histogram range: 1 ns ..= 1 s.
const MAX_NS: u64 = 1_000_000_000;

/// Latencies of one command, bucketed by clock ticks.
#[derive(Debug, Clone)]
pub struct Histogram {
    counts: Box<[u64; BUCKETS]>,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: Box::new([0; BUCKETS]) }
    }
}

/// Bucket of a tick count: 16 per power of two. Counts below 16 ticks (a
/// few ns, never a whole command) share the first bucket, which keeps this
/// free of branches.
#[inline]
fn bucket(ticks: u64) -> usize {
    let t = ticks.max(SUB as u64);
    let top = 63 - t.leading_zeros();
    let sub = (t >> (top - SUB_BITS)) as usize & (SUB - 1);
    (top - SUB_BITS) as usize * SUB + sub
}

/// Highest tick count that falls in bucket `i`.
fn bucket_top(i: usize) -> u64 {
    let top = (i / SUB) as u32 + SUB_BITS;
    let width = 1u64 << (top - SUB_BITS);
    ((SUB + i % SUB) as u64) * width + width - 1
}

/// Nanoseconds for `ticks`, clamped to Redis's histogram range.
fn ticks_to_ns(ticks: u64) -> u64 {
    clock::ticks_to_us(ticks.saturating_mul(1000)).clamp(1, MAX_NS)
}

/// The highest value HdrHistogram (2 significant digits, unit 1 ns)
/// treats as equal to `ns`: what Redis reports for a recorded `ns`.
pub fn hdr_highest_equivalent(ns: u64) -> u64 {
    if ns < 256 {
        return ns;
    }
    let shift = 63 - ns.leading_zeros() - 7;
    ((ns >> shift) << shift) + (1u64 << shift) - 1
}

impl Histogram {
    #[inline]
    pub fn record(&mut self, ticks: u64) {
        self.counts[bucket(ticks)] += 1;
    }
    /// Number of recorded calls (summed here to keep `record` minimal).
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
    /// Recorded values as (nanoseconds, count), ascending.
    fn ns_counts(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let counts = self.counts.iter().enumerate().filter(|(_, c)| **c > 0);
        counts.map(|(i, c)| (hdr_highest_equivalent(ticks_to_ns(bucket_top(i))), *c))
    }
    /// The latency (µs) at percentile `p` (0..=100), as Redis prints it.
    pub fn percentile_us(&self, p: f64) -> f64 {
        let wanted = ((p / 100.0) * self.total() as f64 + 0.5).max(1.0) as u64;
        let mut seen = 0;
        let mut last = 0;
        for (ns, c) in self.ns_counts() {
            seen += c;
            last = ns;
            if seen >= wanted {
                break;
            }
        }
        last as f64 / 1000.0
    }
    /// Cumulative counts at power-of-two microsecond steps starting at
    /// 1024 ns, keeping only the steps where the count grew (Redis's
    /// `histogram_usec`): (µs, cumulative calls).
    pub fn cumulative_usec(&self) -> Vec<(u64, u64)> {
        let values: Vec<(u64, u64)> = self.ns_counts().collect();
        let total = self.total();
        let mut out = Vec::new();
        let (mut level, mut seen, mut idx) = (1024u64, 0u64, 0usize);
        while seen < total {
            let limit = hdr_highest_equivalent(level);
            while idx < values.len() && values[idx].0 <= limit {
                seen += values[idx].1;
                idx += 1;
            }
            if out.last().map_or(seen > 0, |&(_, c)| seen > c) {
                out.push((limit / 1000, seen));
            }
            level *= 2;
        }
        out
    }
}

/// One latency sample: unix seconds and milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sample {
    pub time: i64,
    pub latency_ms: u64,
}

/// The recent samples of one event, oldest first, at most one per second.
#[derive(Debug, Clone, Default)]
pub struct Series {
    samples: std::collections::VecDeque<Sample>,
    /// Highest latency ever recorded for the event.
    pub max_ms: u64,
}

impl Series {
    pub fn samples(&self) -> impl Iterator<Item = &Sample> {
        self.samples.iter()
    }
    pub fn latest(&self) -> Sample {
        self.samples.back().copied().unwrap_or_default()
    }
}

/// Latency monitor events by name.
#[derive(Debug, Default)]
pub struct Events {
    pub series: BTreeMap<String, Series>,
}

impl Events {
    /// Record `latency_ms` for `event` at unix second `now`; within the
    /// same second only the highest sample is kept.
    pub fn add(&mut self, event: &str, latency_ms: u64, now: i64) {
        let s = self.series.entry(event.to_string()).or_default();
        s.max_ms = s.max_ms.max(latency_ms);
        if let Some(last) = s.samples.back_mut() {
            if last.time == now {
                last.latency_ms = last.latency_ms.max(latency_ms);
                return;
            }
        }
        if s.samples.len() == SERIES_LEN {
            s.samples.pop_front();
        }
        s.samples.push_back(Sample { time: now, latency_ms });
    }
    /// Forget `event` (all events if None); how many were forgotten.
    pub fn reset(&mut self, event: Option<&str>) -> usize {
        match event {
            None => std::mem::take(&mut self.series).len(),
            Some(e) => usize::from(self.series.remove(e).is_some()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_contain_their_values() {
        let mut last = 0;
        for t in (16..5000u64).chain([1 << 20, (1 << 20) + 12345, 1 << 39, u64::MAX]) {
            let b = bucket(t);
            assert!(b >= last, "bucket of {t} went back");
            assert!(b < BUCKETS);
            last = b;
            assert!(bucket_top(b) >= t, "{t} above its bucket's top {}", bucket_top(b));
            assert!(bucket(bucket_top(b)) == b, "top of bucket {b} is outside it");
        }
    }

    #[test]
    fn tiny_and_huge_counts_land_in_the_end_buckets() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(15), 0);
        assert_eq!(bucket(17), 1);
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
        let mut h = Histogram::default();
        h.record(100);
        h.record(u64::MAX);
        assert_eq!(h.total(), 2);
    }

    #[test]
    fn hdr_rounding_matches_redis_output() {
        // Redis prints 13.055 µs and 1073.151 µs for such recordings.
        assert_eq!(hdr_highest_equivalent(13_000), 13_055);
        assert_eq!(hdr_highest_equivalent(1_072_000), 1_073_151);
        assert_eq!(hdr_highest_equivalent(1_003), 1_003);
        assert_eq!(hdr_highest_equivalent(200), 200);
    }

    #[test]
    fn events_keep_one_sample_per_second_and_the_max() {
        let mut e = Events::default();
        e.add("command", 5, 100);
        e.add("command", 9, 100);
        e.add("command", 3, 100);
        e.add("command", 4, 101);
        let s = &e.series["command"];
        let got: Vec<Sample> = s.samples().copied().collect();
        assert_eq!(got, [Sample { time: 100, latency_ms: 9 }, Sample { time: 101, latency_ms: 4 }]);
        assert_eq!(s.max_ms, 9);
        assert_eq!(e.reset(Some("nope")), 0);
        assert_eq!(e.reset(None), 1);
    }

    #[test]
    fn the_series_is_bounded() {
        let mut e = Events::default();
        for t in 0..200 {
            e.add("x", 1, t);
        }
        assert_eq!(e.series["x"].samples().count(), SERIES_LEN);
        assert_eq!(e.series["x"].latest().time, 199);
    }
}
