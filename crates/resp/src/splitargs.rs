//! Placeholder tokenizer; replaced by the config branch's sdssplitargs port.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    Some(
        line.split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
            .map(|w| w.to_vec())
            .collect(),
    )
}
