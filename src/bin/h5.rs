//! `h5`: inspect, dump, extract and copy any HDF5 file.

fn main() {
    eprintln!("h5: no commands yet");
    std::process::exit(2);
}
