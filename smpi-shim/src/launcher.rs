//! `smpirun`: command line, rank placement, and the simulation run.

mod args;
mod heap;
mod report;
mod run;
mod stop;

use args::*;
use report::*;
use run::*;

use crate::config;

/// Runs `smpirun` with its command-line arguments (without the program name);
/// returns the process exit code.
pub fn main_with_args(argv: &[String]) -> i32 {
    let args = match parse_args(argv) {
        Ok(Command::Run(a)) => {
            heap::restart_with_huge_page_heap(a.np.unwrap_or(0));
            a
        }
        Ok(Command::Help) => {
            print!("{USAGE}");
            return 0;
        }
        Ok(Command::HelpCfg) => {
            print!("{}", config::help());
            return 0;
        }
        Ok(Command::HelpColl) => {
            print!("{}", crate::coll::help());
            return 0;
        }
        Ok(Command::Version) => {
            println!("smpirun (smpi-rs) {}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        Err(e) => {
            eprintln!("smpirun: error: {e}");
            return 2;
        }
    };
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("smpirun: error: {e}");
            2
        }
    }
}
