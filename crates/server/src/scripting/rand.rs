//! `math.random` as Redis 7.0 has it: the 48-bit linear congruential
//! generator of `drand48` (Redis's `redisLrand48`), one stream for the whole
//! server that is never reseeded between scripts, so the same sequence of
//! calls gives the same numbers as redis-server.

/// The generator's state before any `math.randomseed` (drand48's defaults).
pub const INITIAL_STATE: u64 = 0x1234_ABCD_330E;
const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const INCREMENT: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;
/// Redis divides by INT32_MAX, not 2^31.
const LRAND48_MAX: u64 = i32::MAX as u64;

/// Advance the state; the next 31-bit output.
pub fn next(state: &mut u64) -> u64 {
    *state = (state.wrapping_mul(MULTIPLIER).wrapping_add(INCREMENT)) & MASK;
    *state >> 17
}

/// A double in [0, 1), as Redis computes it.
pub fn next_double(state: &mut u64) -> f64 {
    (next(state) % LRAND48_MAX) as f64 / LRAND48_MAX as f64
}

/// The state `srand48(seed)` sets: the seed's 32 bits above 0x330E.
pub fn seeded(seed: i32) -> u64 {
    ((seed as u32 as u64) << 16) | 0x330E
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_redis_first_values() {
        // Values read from a fresh redis-server 7.0.15 (tostring(math.random())).
        let mut s = INITIAL_STATE;
        assert_eq!(format!("{:.14}", next_double(&mut s)), "0.39646477363839");
        assert_eq!(format!("{:.14}", next_double(&mut s)), "0.84048536971234");
        let mut s = seeded(7);
        assert_eq!(format!("{:.14}", next_double(&mut s)), "0.26644419658298");
    }
}
