//! Geospatial indexing on sorted sets (the GEO* commands): the 52-bit
//! interleaved geohash kept as a member's score, its decoding back to a cell
//! centre, great-circle distances, the nine-cell cover of a radius or box
//! search and the walk over a sorted set that collects the points inside,
//! and the orderings of the results.
//!
//! Every formula here follows Redis 7.0's arithmetic step by step (same
//! constants, same operation order, libm's trigonometry), because clients
//! compare the printed coordinates and distances byte for byte and the
//! search must find exactly the members Redis finds.
use std::cmp::Ordering;

use super::zset::ZSet;

/// Bits per axis of a stored position (2 × 26 = 52, exact in a double).
pub const STEP_MAX: u8 = 26;
/// The indexable latitudes (Web Mercator's limits).
pub const LAT_MIN: f64 = -85.05112878;
pub const LAT_MAX: f64 = 85.05112878;
pub const LON_MIN: f64 = -180.0;
pub const LON_MAX: f64 = 180.0;

/// Earth's quadratic mean radius (WGS-84), the one Redis's haversine uses.
const EARTH_RADIUS_M: f64 = 6372797.560856;
const MERCATOR_MAX: f64 = 20037726.37;
const DEG_TO_RAD: f64 = std::f64::consts::PI / 180.0;

const ODD_BITS: u64 = 0xaaaa_aaaa_aaaa_aaaa;
const EVEN_BITS: u64 = 0x5555_5555_5555_5555;

/// The span one axis of a cell grid covers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    pub min: f64,
    pub max: f64,
}

const LON_SPAN: Span = Span { min: LON_MIN, max: LON_MAX };
const LAT_SPAN: Span = Span { min: LAT_MIN, max: LAT_MAX };
/// Standard geohash latitudes, for the strings GEOHASH prints.
const STD_LAT_SPAN: Span = Span { min: -90.0, max: 90.0 };

/// A grid cell: `step` bits per axis, interleaved with latitude in the even
/// bit positions and longitude in the odd ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub bits: u64,
    pub step: u8,
}

/// The extent of a cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    pub lon: Span,
    pub lat: Span,
}

/// Bits 0..32 of `v` moved to the even positions of the result.
fn spread(v: u32) -> u64 {
    let mut x = u64::from(v);
    x = (x | x << 16) & 0x0000_ffff_0000_ffff;
    x = (x | x << 8) & 0x00ff_00ff_00ff_00ff;
    x = (x | x << 4) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | x << 2) & 0x3333_3333_3333_3333;
    (x | x << 1) & EVEN_BITS
}

/// The even-position bits of `v`, packed (inverse of [`spread`]).
fn gather(v: u64) -> u32 {
    let mut x = v & EVEN_BITS;
    x = (x | x >> 1) & 0x3333_3333_3333_3333;
    x = (x | x >> 2) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | x >> 4) & 0x00ff_00ff_00ff_00ff;
    x = (x | x >> 8) & 0x0000_ffff_0000_ffff;
    (x | x >> 16) as u32
}

/// The cell of `step` bits per axis holding (lon, lat) on the given grid;
/// None outside the indexable area.
fn encode_on(lon_span: Span, lat_span: Span, lon: f64, lat: f64, step: u8) -> Option<Cell> {
    if !(1..=32).contains(&step) || !(LON_MIN..=LON_MAX).contains(&lon) || !(LAT_MIN..=LAT_MAX).contains(&lat) {
        return None;
    }
    if lat < lat_span.min || lat > lat_span.max || lon < lon_span.min || lon > lon_span.max {
        return None;
    }
    let scale = (1u64 << step) as f64;
    let lat_off = (lat - lat_span.min) / (lat_span.max - lat_span.min) * scale;
    let lon_off = (lon - lon_span.min) / (lon_span.max - lon_span.min) * scale;
    Some(Cell { bits: spread(lat_off as u32) | spread(lon_off as u32) << 1, step })
}

/// The cell of `step` bits per axis holding (lon, lat).
pub fn encode(lon: f64, lat: f64, step: u8) -> Option<Cell> {
    encode_on(LON_SPAN, LAT_SPAN, lon, lat, step)
}

fn decode_on(lon_span: Span, lat_span: Span, cell: Cell) -> Area {
    let lat_idx = gather(cell.bits);
    let lon_idx = gather(cell.bits >> 1);
    let cells = (1u64 << cell.step) as f64;
    let lat_scale = lat_span.max - lat_span.min;
    let lon_scale = lon_span.max - lon_span.min;
    // The +1 wraps in 32 bits like the C it mirrors (only foreign scores reach it).
    let edge = |idx: u32, span: Span, scale: f64| span.min + (f64::from(idx) / cells) * scale;
    Area {
        lat: Span { min: edge(lat_idx, lat_span, lat_scale), max: edge(lat_idx.wrapping_add(1), lat_span, lat_scale) },
        lon: Span { min: edge(lon_idx, lon_span, lon_scale), max: edge(lon_idx.wrapping_add(1), lon_span, lon_scale) },
    }
}

/// The extent of `cell`.
pub fn decode(cell: Cell) -> Area {
    decode_on(LON_SPAN, LAT_SPAN, cell)
}

/// An area's centre, clamped to the indexable area.
fn centre(a: &Area) -> (f64, f64) {
    let lon = ((a.lon.min + a.lon.max) / 2.0).clamp(LON_MIN, LON_MAX);
    let lat = ((a.lat.min + a.lat.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    (lon, lat)
}

/// The sorted-set score GEOADD stores for a valid (lon, lat).
pub fn score_of(lon: f64, lat: f64) -> Option<u64> {
    encode(lon, lat, STEP_MAX).map(|c| c.bits << (52 - 2 * u32::from(STEP_MAX)))
}

/// A score's bits as C's `(uint64_t)` conversion yields them on x86-64
/// (members need not have been added by GEOADD: any score decodes to some
/// position, and Redis's replies for those follow this conversion).
fn score_bits(score: f64) -> u64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    // cvttsd2si: out-of-range and NaN inputs give the "integer indefinite".
    let truncate = |x: f64| if x.is_nan() || !(-TWO_63..TWO_63).contains(&x) { i64::MIN } else { x as i64 };
    if score >= TWO_63 {
        (truncate(score - TWO_63) as u64) ^ (1 << 63)
    } else {
        truncate(score) as u64
    }
}

/// The position (lon, lat) a score stands for: the centre of its cell.
pub fn position(score: f64) -> (f64, f64) {
    centre(&decode(Cell { bits: score_bits(score), step: STEP_MAX }))
}

/// The 11-character standard geohash of a score's position (the last
/// character is always '0': only 52 bits are kept).
pub fn geohash_text(score: f64) -> [u8; 11] {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let (lon, lat) = position(score);
    let bits = encode_on(LON_SPAN, STD_LAT_SPAN, lon, lat, STEP_MAX).map_or(0, |c| c.bits);
    let mut out = [b'0'; 11];
    for (i, ch) in out.iter_mut().take(10).enumerate() {
        *ch = ALPHABET[((bits >> (52 - (i + 1) * 5)) & 0x1f) as usize];
    }
    out
}

/// `cell` moved by `dx` cells east (negative: west) and `dy` cells north
/// (negative: south), wrapping around the grid.
fn moved(cell: Cell, dx: i8, dy: i8) -> Cell {
    let shift = 64 - 2 * u32::from(cell.step);
    let mut bits = cell.bits;
    for (d, axis) in [(dx, ODD_BITS), (dy, EVEN_BITS)] {
        if d == 0 {
            continue;
        }
        let other = !axis;
        let mut v = bits & axis;
        // Filling the other axis's bit positions makes carries and borrows
        // run straight through them.
        let fill = other >> shift;
        if d > 0 {
            v = v.wrapping_add(fill + 1);
        } else {
            v = (v | fill).wrapping_sub(fill + 1);
        }
        bits = (v & (axis >> shift)) | (bits & other);
    }
    Cell { bits, step: cell.step }
}

/// Distance in meters between two latitudes on one meridian.
fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS_M * ((lat2 * DEG_TO_RAD) - (lat1 * DEG_TO_RAD)).abs()
}

/// Great-circle (haversine) distance in meters.
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let lon1r = lon1 * DEG_TO_RAD;
    let lon2r = lon2 * DEG_TO_RAD;
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let lat1r = lat1 * DEG_TO_RAD;
    let lat2r = lat2 * DEG_TO_RAD;
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_M * a.sqrt().asin()
}

/// Bits per axis for cells about as large as `range_m` around latitude
/// `lat` (coarser towards the poles, where meridians converge).
fn estimate_step(mut range_m: f64, lat: f64) -> u8 {
    if range_m == 0.0 {
        return STEP_MAX;
    }
    let mut step: i32 = 1;
    while range_m < MERCATOR_MAX {
        range_m *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, i32::from(STEP_MAX)) as u8
}

/// What a search covers around its centre, in units of `Shape::unit`.
#[derive(Clone, Copy, Debug)]
pub enum Extent {
    Radius(f64),
    Box { width: f64, height: f64 },
}

/// A search area: centre, extent, and meters per unit of the extent.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub lon: f64,
    pub lat: f64,
    pub unit: f64,
    pub extent: Extent,
}

impl Shape {
    /// Longitude and latitude bounds (min lon, min lat, max lon, max lat)
    /// of the area. Meridians converge poleward, so the wider of the box's
    /// two latitude edges bounds the longitudes.
    fn bounds(&self) -> [f64; 4] {
        let (half_h, half_w) = match self.extent {
            Extent::Radius(r) => (self.unit * r, self.unit * r),
            Extent::Box { width, height } => (self.unit * (height / 2.0), self.unit * (width / 2.0)),
        };
        let lat_delta = (half_h / EARTH_RADIUS_M) / DEG_TO_RAD;
        let lon_delta_at = |lat: f64| (half_w / EARTH_RADIUS_M / (lat * DEG_TO_RAD).cos()) / DEG_TO_RAD;
        let lon_delta =
            if self.lat < 0.0 { lon_delta_at(self.lat - lat_delta) } else { lon_delta_at(self.lat + lat_delta) };
        [self.lon - lon_delta, self.lat - lat_delta, self.lon + lon_delta, self.lat + lat_delta]
    }

    /// Distance in meters from the centre to the farthest point of the area.
    fn reach(&self) -> f64 {
        let r = match self.extent {
            Extent::Radius(r) => r,
            Extent::Box { width, height } => ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt(),
        };
        r * self.unit
    }

    /// The cells to scan, in scan order: the centre's cell, then its
    /// neighbours north, south, east, west, north-east, north-west,
    /// south-east, south-west; None for neighbours the area cannot reach.
    pub fn cells(&self) -> [Option<Cell>; 9] {
        let [min_lon, min_lat, max_lon, max_lat] = self.bounds();
        let mut step = estimate_step(self.reach(), self.lat);
        let around = |step: u8| {
            let c = encode(self.lon, self.lat, step).unwrap_or(Cell { bits: 0, step });
            let n = [(0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, 1), (1, -1), (-1, -1)].map(|(x, y)| moved(c, x, y));
            (c, n)
        };
        let (mut c, mut n) = around(step);
        // Near a cell edge the estimate can leave part of the area outside
        // the nine cells: then use cells twice as large.
        let too_small = decode(n[0]).lat.max < max_lat
            || decode(n[1]).lat.min > min_lat
            || decode(n[2]).lon.max < max_lon
            || decode(n[3]).lon.min > min_lon;
        if step > 1 && too_small {
            step -= 1;
            (c, n) = around(step);
        }
        let mut out =
            [Some(c), Some(n[0]), Some(n[1]), Some(n[2]), Some(n[3]), Some(n[4]), Some(n[5]), Some(n[6]), Some(n[7])];
        if step >= 2 {
            let a = decode(c);
            // Indices into `out`: N 1, S 2, E 3, W 4, NE 5, NW 6, SE 7, SW 8.
            let drop: [(bool, [usize; 3]); 4] = [
                (a.lat.min < min_lat, [2, 8, 7]),
                (a.lat.max > max_lat, [1, 5, 6]),
                (a.lon.min < min_lon, [4, 8, 6]),
                (a.lon.max > max_lon, [3, 7, 5]),
            ];
            for (_, idx) in drop.iter().filter(|(cut, _)| *cut) {
                idx.iter().for_each(|&i| out[i] = None);
            }
        }
        out
    }

    /// The position of `score` and its distance (meters) from the centre,
    /// if it lies inside the area.
    pub fn locate(&self, score: f64) -> Option<(f64, f64, f64)> {
        let (lon, lat) = position(score);
        match self.extent {
            Extent::Radius(r) => {
                let d = distance(self.lon, self.lat, lon, lat);
                // Only "farther than the radius" excludes (a NaN distance does not).
                (d.partial_cmp(&(r * self.unit)) != Some(Ordering::Greater)).then_some((lon, lat, d))
            }
            Extent::Box { width, height } => {
                if lat_distance(lat, self.lat) > height * self.unit / 2.0 {
                    return None;
                }
                if distance(lon, lat, self.lon, lat) > width * self.unit / 2.0 {
                    return None;
                }
                Some((lon, lat, distance(self.lon, self.lat, lon, lat)))
            }
        }
    }
}

/// A member found by a search.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub member: Vec<u8>,
    pub score: f64,
    pub lon: f64,
    pub lat: f64,
    /// Meters from the search centre.
    pub dist: f64,
}

/// The score interval [min, max) of the 52-bit hashes inside `cell`.
fn score_span(cell: Cell) -> (f64, f64) {
    let shift = 52 - 2 * u32::from(cell.step);
    ((cell.bits << shift) as f64, ((cell.bits + 1) << shift) as f64)
}

/// The members of `z` inside `shape`, in scan order (cell by cell, score
/// order within a cell); stops once `limit` (> 0) points were found.
pub fn search(z: &ZSet, shape: &Shape, limit: usize) -> Vec<Point> {
    let cells = shape.cells();
    let mut found = Vec::new();
    let full = |found: &Vec<Point>| limit > 0 && found.len() >= limit;
    // Index of the last scanned cell, 0 standing for "none yet" (as in
    // Redis, so a neighbour equal to the centre cell is scanned again).
    let mut last = 0;
    for (i, cell) in cells.iter().enumerate() {
        let Some(cell) = *cell else { continue };
        // Huge areas use cells so large that neighbours coincide.
        if last != 0 && cells[last] == Some(cell) {
            continue;
        }
        if full(&found) {
            break;
        }
        let (min, max) = score_span(cell);
        let start = z.count_before(|it| it.score < min);
        z.for_range(start, z.len(), false, &mut |it| {
            if it.score >= max {
                return false;
            }
            if let Some((lon, lat, dist)) = shape.locate(it.score) {
                found.push(Point { member: it.member().to_vec(), score: it.score, lon, lat, dist });
            }
            !full(&found)
        });
        last = i;
    }
    found
}

/// How search results are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sort {
    /// Scan order.
    Unsorted,
    /// Nearest first.
    Asc,
    /// Farthest first.
    Desc,
}

/// Order `points` by distance so that the first `keep` are the ones to
/// return. A full sort is stable (glibc's merge sort, which Redis's qsort
/// is); a partial one is Redis's Bentley-McIlroy quicksort restricted to
/// the kept prefix. Equal distances therefore end up exactly where Redis
/// puts them.
pub fn sort_points(points: &mut Vec<Point>, sort: Sort, keep: usize) {
    let desc = match sort {
        Sort::Unsorted => return,
        Sort::Asc => false,
        Sort::Desc => true,
    };
    let cmp = |a: &Point, b: &Point| {
        // Redis's comparator: NaN distances compare as "less".
        let asc = if a.dist > b.dist {
            Ordering::Greater
        } else if a.dist == b.dist {
            Ordering::Equal
        } else {
            Ordering::Less
        };
        if desc {
            asc.reverse()
        } else {
            asc
        }
    };
    if keep >= points.len() {
        merge_sort(points, &cmp);
    } else if keep > 0 {
        let n = points.len();
        partial_quicksort(points, 0, n, &cmp, (0, keep - 1));
    }
}

/// Top-down merge sort (left half of n/2), taking from the left run on ties.
fn merge_sort<T, F: Fn(&T, &T) -> Ordering>(v: &mut Vec<T>, cmp: &F) {
    fn order<T, F: Fn(&T, &T) -> Ordering>(v: &[T], idx: &mut [usize], tmp: &mut Vec<usize>, cmp: &F) {
        if idx.len() <= 1 {
            return;
        }
        let (left, right) = idx.split_at_mut(idx.len() / 2);
        order(v, left, tmp, cmp);
        order(v, right, tmp, cmp);
        tmp.clear();
        let (mut i, mut j) = (0, 0);
        while i < left.len() && j < right.len() {
            if cmp(&v[left[i]], &v[right[j]]) != Ordering::Greater {
                tmp.push(left[i]);
                i += 1;
            } else {
                tmp.push(right[j]);
                j += 1;
            }
        }
        tmp.extend_from_slice(&left[i..]);
        tmp.extend_from_slice(&right[j..]);
        idx.copy_from_slice(tmp);
    }
    let mut idx: Vec<usize> = (0..v.len()).collect();
    order(v, &mut idx, &mut Vec::with_capacity(v.len()), cmp);
    let mut slots: Vec<Option<T>> = v.drain(..).map(Some).collect();
    v.extend(idx.iter().map(|&i| slots[i].take().expect("each index once")));
}

/// Median of three positions of `v`, by Bentley and McIlroy's rule.
fn median3<T, F: Fn(&T, &T) -> Ordering>(v: &[T], a: usize, b: usize, c: usize, cmp: &F) -> usize {
    if cmp(&v[a], &v[b]).is_lt() {
        if cmp(&v[b], &v[c]).is_lt() {
            b
        } else if cmp(&v[a], &v[c]).is_lt() {
            c
        } else {
            a
        }
    } else if cmp(&v[b], &v[c]).is_gt() {
        b
    } else if cmp(&v[a], &v[c]).is_lt() {
        a
    } else {
        c
    }
}

/// Swap `n` elements pairwise between positions `a..` and `b..`.
fn swap_runs<T>(v: &mut [T], a: usize, b: usize, n: usize) {
    (0..n).for_each(|i| v.swap(a + i, b + i));
}

/// Bentley-McIlroy three-way quicksort of `v[base..base + n]` that skips
/// partitions lying wholly outside the wanted positions `want` (inclusive).
fn partial_quicksort<T, F: Fn(&T, &T) -> Ordering>(
    v: &mut [T],
    mut base: usize,
    mut n: usize,
    cmp: &F,
    want: (usize, usize),
) {
    let needed = |start: usize, len: usize| {
        let (lo, hi) = want;
        !((lo < start && hi < start) || (lo >= start + len && hi >= start + len))
    };
    loop {
        if n < 7 {
            for m in base + 1..base + n {
                let mut l = m;
                while l > base && cmp(&v[l - 1], &v[l]).is_gt() {
                    v.swap(l, l - 1);
                    l -= 1;
                }
            }
            return;
        }
        let mut pm = base + n / 2;
        if n > 7 {
            let (mut pl, mut pn) = (base, base + n - 1);
            if n > 40 {
                let d = n / 8;
                pl = median3(v, pl, pl + d, pl + 2 * d, cmp);
                pm = median3(v, pm - d, pm, pm + d, cmp);
                pn = median3(v, pn - 2 * d, pn - d, pn, cmp);
            }
            pm = median3(v, pl, pm, pn, cmp);
        }
        v.swap(base, pm);
        let (mut pa, mut pb) = (base + 1, base + 1);
        let (mut pc, mut pd) = (base + n - 1, base + n - 1);
        loop {
            while pb <= pc {
                let c = cmp(&v[pb], &v[base]);
                if c.is_gt() {
                    break;
                }
                if c.is_eq() {
                    v.swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            while pb <= pc {
                let c = cmp(&v[pc], &v[base]);
                if c.is_lt() {
                    break;
                }
                if c.is_eq() {
                    v.swap(pc, pd);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb > pc {
                break;
            }
            v.swap(pb, pc);
            pb += 1;
            pc -= 1;
        }
        let end = base + n;
        let r = (pa - base).min(pb - pa);
        swap_runs(v, base, pb - r, r);
        let r = (pd - pc).min(end - pd - 1);
        swap_runs(v, pb, end - r, r);
        let left = pb - pa;
        if left > 1 && needed(base, left) {
            partial_quicksort(v, base, left, cmp, want);
        }
        let right = pd - pc;
        if right <= 1 {
            return;
        }
        base = end - right;
        n = right;
        if !needed(base, n) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::zset::Limits;

    const LIM: Limits = Limits { entries: 128, value: 64 };

    /// The position of `score`, checked against coordinates as Redis printed
    /// them (17 decimals: enough digits to name one double).
    fn coords(score: f64) -> (String, String) {
        let (lon, lat) = position(score);
        (format!("{lon:.17}"), format!("{lat:.17}"))
    }
    fn printed(lon: &str, lat: &str) -> (String, String) {
        let p = |t: &str| format!("{:.17}", t.parse::<f64>().unwrap());
        (p(lon), p(lat))
    }

    #[test]
    fn scores_positions_and_hashes_match_redis() {
        // (lon, lat, score, printed lon, printed lat, geohash) from redis-server 7.0.15.
        let cases: &[(f64, f64, u64, &str, &str, &str)] = &[
            (13.361389, 38.115556, 3479099956230698, "13.36138933897018433", "38.11555639549629859", "sqc8b49rny0"),
            (15.087269, 37.502669, 3479447370796909, "15.08726745843887329", "37.50266842333162032", "sqdtr74hyu0"),
            (0.0, 0.0, 3377699720527872, "0.00000268220901489", "0.00000126736058093", "s0000000000"),
            (-180.0, LAT_MIN, 0, "-179.99999731779098511", "-85.05112751263942528", "00bh0hbj200"),
            (180.0, LAT_MAX, 13510798882111488, "180", "85.0511287799999991", "bp05b5048p0"),
            (179.9999, -0.0000001, 3377699720527351, "179.99990075826644897", "-0.00000126736058093", "rzzzzzzzvx0"),
        ];
        for &(lon, lat, score, plon, plat, hash) in cases {
            assert_eq!(score_of(lon, lat), Some(score), "{lon},{lat}");
            assert_eq!(coords(score as f64), printed(plon, plat));
            assert_eq!(&geohash_text(score as f64), hash.as_bytes());
        }
        assert_eq!(score_of(180.0001, 0.0), None);
        assert_eq!(score_of(0.0, 85.06), None);
    }

    #[test]
    fn foreign_scores_decode_like_x86_conversions() {
        // Scores ZADD can store but GEOADD never writes (checked live).
        let inf = printed("-179.99999731779098511", "-85.05112751263942528");
        assert_eq!(coords(f64::INFINITY), inf);
        assert_eq!(coords(2e19), inf);
        let indefinite = printed("180", "-85.05112751263942528");
        assert_eq!(coords(f64::NEG_INFINITY), indefinite);
        assert_eq!(coords(-1e19), indefinite);
        assert_eq!(coords(-5.7), printed("180", "85.0511287799999991"));
        assert_eq!(coords(1.5), printed("-179.99999731779098511", "-85.05112497791824921"));
    }

    #[test]
    fn distances_match_redis() {
        // In units of 0.0001, as Redis printed them.
        let tenths = |d: f64| (d * 10000.0).round_ties_even() as i64;
        let ((lon1, lat1), (lon2, lat2)) = (position(3479099956230698.0), position(3479447370796909.0));
        let d = distance(lon1, lat1, lon2, lat2);
        assert_eq!(tenths(d), 1662741516);
        let (a, b) = (position(0.0), position(13510798882111488.0));
        assert_eq!(tenths(distance(a.0, a.1, b.0, b.1) / 1609.34), 117562756);
        // Same longitude: the meridian shortcut.
        assert_eq!(distance(10.0, 1.0, 10.0, 2.0), lat_distance(1.0, 2.0));
    }

    #[test]
    fn neighbours_move_and_wrap() {
        let c = Cell { bits: spread(1) | spread(2) << 1, step: 2 };
        let axes = |c: Cell| (gather(c.bits >> 1), gather(c.bits));
        assert_eq!(axes(moved(c, 1, 0)), (3, 1));
        assert_eq!(axes(moved(c, -1, 1)), (1, 2));
        assert_eq!(axes(moved(c, 0, -1)), (2, 0));
        assert_eq!(axes(moved(moved(c, 1, 0), 1, 0)), (0, 1), "east of the last column wraps");
        assert_eq!(axes(moved(moved(c, 0, -1), 0, -1)), (2, 3), "south of the first row wraps");
    }

    #[test]
    fn step_estimates() {
        assert_eq!(estimate_step(0.0, 0.0), 26);
        assert_eq!(estimate_step(1.0, 0.0), 24);
        assert_eq!(estimate_step(1000.0, 0.0), 14);
        assert_eq!(estimate_step(1000.0, 70.0), 13);
        assert_eq!(estimate_step(1000.0, -81.0), 12);
        assert_eq!(estimate_step(5e7, 0.0), 1);
        assert_eq!(estimate_step(f64::INFINITY, 0.0), 1);
    }

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (*seed >> 11) as f64 / (1u64 << 53) as f64
    }

    #[test]
    fn search_finds_exactly_the_points_inside() {
        let mut seed = 7;
        for round in 0..40 {
            let mut z = ZSet::default();
            for i in 0..300 {
                let (lon, lat) = (-180.0 + lcg(&mut seed) * 360.0, -70.0 + lcg(&mut seed) * 140.0);
                z.set(format!("p{i}").as_bytes(), score_of(lon, lat).unwrap() as f64, LIM);
            }
            let (lon, lat) = (-180.0 + lcg(&mut seed) * 360.0, -70.0 + lcg(&mut seed) * 140.0);
            let size = 10.0 + lcg(&mut seed) * 3000.0;
            let extent =
                if round % 2 == 0 { Extent::Radius(size) } else { Extent::Box { width: size, height: size / 2.0 } };
            let shape = Shape { lon, lat, unit: 1000.0, extent };
            let mut found: Vec<Vec<u8>> = search(&z, &shape, 0).into_iter().map(|p| p.member).collect();
            let mut inside: Vec<Vec<u8>> =
                z.items().into_iter().filter(|(s, _)| shape.locate(*s).is_some()).map(|(_, m)| m).collect();
            found.sort();
            inside.sort();
            assert_eq!(found, inside, "round {round}");
            let capped = search(&z, &shape, 3);
            assert!(capped.len() <= 3 && capped.iter().all(|p| shape.locate(p.score).is_some()));
        }
    }

    #[test]
    fn full_sorts_are_stable_and_partial_sorts_order_the_prefix() {
        let mut seed = 3;
        for n in [0, 1, 5, 7, 8, 30, 41, 120, 500] {
            // Few distinct distances, so ties are everywhere.
            let pts: Vec<Point> = (0..n)
                .map(|i: usize| Point {
                    member: i.to_be_bytes().to_vec(),
                    score: 0.0,
                    lon: 0.0,
                    lat: 0.0,
                    dist: (lcg(&mut seed) * 6.0).floor(),
                })
                .collect();
            for sort in [Sort::Asc, Sort::Desc] {
                let mut expect = pts.clone();
                expect.sort_by(
                    |a, b| if sort == Sort::Asc { a.dist.total_cmp(&b.dist) } else { b.dist.total_cmp(&a.dist) },
                );
                let mut full = pts.clone();
                sort_points(&mut full, sort, n);
                assert_eq!(full, expect, "n={n} {sort:?}");
                for keep in [1, 3, n / 2].into_iter().filter(|&k| k > 0 && k < n) {
                    let mut part = pts.clone();
                    sort_points(&mut part, sort, keep);
                    let dists = |v: &[Point]| v[..keep].iter().map(|p| p.dist).collect::<Vec<_>>();
                    assert_eq!(dists(&part), dists(&expect), "n={n} keep={keep}");
                    part.sort_by(|a, b| a.member.cmp(&b.member));
                    assert_eq!(part, pts, "a permutation");
                }
            }
        }
    }

    #[test]
    fn partial_sort_moves_ties_as_redis_does() {
        // Redis 7.0.15, GEORADIUS t 0 0 100 km COUNT n [DESC] over a0..a9 at
        // one position and b0..b9 at a farther one (scanned in that order).
        let names: Vec<String> = (0..20).map(|i| format!("{}{}", if i < 10 { 'a' } else { 'b' }, i % 10)).collect();
        let cases: &[(Sort, usize, &str)] = &[
            (Sort::Asc, 3, "a0 a2 a3"),
            (Sort::Desc, 3, "b9 b0 b1"),
            (Sort::Asc, 12, "a0 a2 a3 a4 a5 a6 a7 a8 a9 a1 b9 b0"),
            (Sort::Desc, 12, "b9 b0 b1 b2 b3 b4 b5 b6 b7 b8 a9 a1"),
            (Sort::Desc, 19, "b9 b0 b1 b2 b3 b4 b5 b6 b7 b8 a9 a1 a2 a3 a4 a5 a6 a7 a8"),
            (Sort::Desc, 20, "b0 b1 b2 b3 b4 b5 b6 b7 b8 b9 a0 a1 a2 a3 a4 a5 a6 a7 a8 a9"),
        ];
        for &(sort, keep, want) in cases {
            let mut pts: Vec<Point> = (0..20)
                .map(|i| Point {
                    member: names[i].clone().into_bytes(),
                    score: 0.0,
                    lon: 0.0,
                    lat: 0.0,
                    dist: if i < 10 { 1.0 } else { 2.0 },
                })
                .collect();
            sort_points(&mut pts, sort, keep);
            let got: Vec<String> = pts[..keep].iter().map(|p| String::from_utf8(p.member.clone()).unwrap()).collect();
            assert_eq!(got.join(" "), want, "{sort:?} {keep}");
        }
    }
}
