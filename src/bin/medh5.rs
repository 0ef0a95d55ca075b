//! `medh5`: the medh5 storage commands.

fn main() {
    eprintln!("medh5: no commands yet");
    std::process::exit(2);
}
