//! Placeholder until the numeric branch lands.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    let t = std::str::from_utf8(s).ok()?;
    if t.is_empty() || t.starts_with('+') || (t.len() > 1 && t.starts_with('0')) || t.starts_with("-0") { return None; }
    t.parse().ok()
}
pub fn parse_f64(s: &[u8]) -> Option<f64> { std::str::from_utf8(s).ok()?.parse().ok().filter(|v: &f64| !v.is_nan()) }
pub fn format_double(out: &mut Vec<u8>, v: f64) { out.extend_from_slice(format!("{v}").as_bytes()) }
pub fn format_resp3_double(out: &mut Vec<u8>, v: f64) { format_double(out, v) }
pub fn format_i64(out: &mut Vec<u8>, v: i64) { out.extend_from_slice(v.to_string().as_bytes()) }
pub enum FloatIncrError { NotFloat, NanOrInfinity }
pub fn incr_by_float(cur: &[u8], incr: &[u8]) -> Result<Vec<u8>, FloatIncrError> {
    let a = parse_f64(cur).ok_or(FloatIncrError::NotFloat)?; let b = parse_f64(incr).ok_or(FloatIncrError::NotFloat)?;
    let r = a + b; if !r.is_finite() { return Err(FloatIncrError::NanOrInfinity); } let mut o = Vec::new(); format_double(&mut o, r); Ok(o)
}
