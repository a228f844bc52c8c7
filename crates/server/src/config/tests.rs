use super::*;

#[test]
fn dump_all() {
    for (k, v) in Config::default().get(&[b"*"]) {
        println!("{k}\t{v}");
    }
}
