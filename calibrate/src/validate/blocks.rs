//! Real runs measured in blocks, between the parts of a calibration.
//!
//! On a shared machine the speed of the cores and of memory moves from one
//! minute to the next; a calibration measured in one stretch and real runs
//! measured in the next see different machines (2026-11-26 on the project's VM:
//! the dgemm probe 5 % and a row gather 23 % faster during the runs than during
//! the calibration before them). Cutting the seeded random order of the real
//! runs into blocks and measuring each block between two parts of the
//! calibration exposes both to the same machine states. `smpi-validate
//! --real-only --block I/K` measures block I and writes a [`RealRunsFile`];
//! `smpi-validate --real-from FILE...` later takes the blocks instead of
//! running anything, after checking that together they are exactly the plan it
//! would have run.

use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};

use crate::validate::analysis::RealRun;
use crate::validate::hpl::HplConfig;
use crate::validate::{FileRef, Software};

/// Format tag of a [`RealRunsFile`].
pub const FORMAT: &str = "smpi-validate-real-runs/1";

/// Block `index` (1-based) of `count` contiguous blocks of the run order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Block {
    /// 1-based.
    pub index: usize,
    /// Number of blocks.
    pub count: usize,
}

impl Block {
    /// The whole order as one block.
    pub const WHOLE: Block = Block { index: 1, count: 1 };

    /// Parses `I/K` (1 ≤ I ≤ K).
    pub fn parse(s: &str) -> anyhow::Result<Self> {
        let bad = || anyhow::anyhow!("--block: '{s}' is not I/K with 1 <= I <= K");
        let (i, k) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = k.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }

    /// The positions of the run order this block holds: the order cut into
    /// `count` contiguous pieces whose sizes differ by at most one.
    pub fn positions(&self, len: usize) -> Range<usize> {
        let cut = |i: usize| i * len / self.count;
        cut(self.index - 1)..cut(self.index)
    }
}

/// What `smpi-validate --real-only` writes: one block of real runs and what
/// they were runs of.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RealRunsFile {
    /// [`FORMAT`].
    pub format: String,
    /// The configurations, in the order their indices refer to.
    pub configs: Vec<HplConfig>,
    /// Real runs per configuration of the whole plan.
    pub runs_per_config: usize,
    /// Seed of the run order.
    pub order_seed: u64,
    /// Which block of the order these runs are.
    pub block: Block,
    /// The launcher command as shown in the report.
    pub real_command: String,
    /// The real program.
    pub real_program: FileRef,
    /// The software of the runs.
    pub software: Software,
    /// Load averages before the first and after the last run of the block.
    pub load: [Option<[f64; 3]>; 2],
    /// Start and end of the block (UTC).
    pub started: String,
    /// End of the block (UTC).
    pub finished: String,
    /// The runs, by position.
    pub real_runs: Vec<RealRun>,
}

impl RealRunsFile {
    /// Reads and checks the format of one file.
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("{}: cannot read it", path.display()))?;
        let f: Self = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a file of smpi-validate --real-only", path.display()))?;
        if f.format != FORMAT {
            bail!("{}: format '{}', expected '{FORMAT}'", path.display(), f.format);
        }
        Ok(f)
    }
}

/// Where one block of real runs came from (the report's setup table and
/// `validation.json`'s `metadata.real_run_blocks`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BlockRecord {
    /// The `--real-from` file.
    pub file: String,
    /// 1-based block index.
    pub index: usize,
    /// Number of blocks.
    pub count: usize,
    /// First and one-past-last position of the run order.
    pub positions: [usize; 2],
    /// Start of the block (UTC).
    pub started: String,
    /// End of the block (UTC).
    pub finished: String,
}

/// The real runs of several blocks, merged.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// Every run of the plan, by position.
    pub real_runs: Vec<RealRun>,
    /// Load before the first block and after the last.
    pub load: [Option<[f64; 3]>; 2],
    /// The first block's launcher command.
    pub real_command: String,
    /// The first block's program.
    pub real_program: FileRef,
    /// The first block's software.
    pub software: Software,
    /// Each block, by index.
    pub blocks: Vec<BlockRecord>,
}

/// Merges blocks measured for `configs` × `runs` in the order of `seed`:
/// every file must be of that plan, with the same program, and together they
/// must hold each position of the order exactly once. Errors name the file.
pub fn merge(
    files: &[(PathBuf, RealRunsFile)],
    configs: &[HplConfig],
    runs: usize,
    seed: u64,
) -> anyhow::Result<Merged> {
    let Some((_, first)) = files.first() else {
        bail!("--real-from: no file");
    };
    let len = configs.len() * runs;
    let mut by_position: Vec<Option<(usize, RealRun)>> = vec![None; len];
    for (i, (path, f)) in files.iter().enumerate() {
        let p = path.display();
        if f.configs != configs {
            bail!(
                "{p}: measured for the configurations {}, this validation has {}",
                labels(&f.configs),
                labels(configs)
            );
        }
        if f.runs_per_config != runs || f.order_seed != seed {
            bail!(
                "{p}: {} runs per configuration in the order of seed {}, this validation has {runs} and seed {seed}",
                f.runs_per_config,
                f.order_seed
            );
        }
        if f.real_program.sha256 != first.real_program.sha256 {
            bail!(
                "{p}: the real program {} differs from that of {} ({})",
                f.real_program.path,
                files[0].0.display(),
                first.real_program.path
            );
        }
        let expected = f.block.positions(len);
        for r in &f.real_runs {
            if !expected.contains(&r.position) || r.config >= configs.len() {
                bail!(
                    "{p}: run at position {} (configuration {}) is outside block {}/{} (positions {}..{})",
                    r.position,
                    r.config,
                    f.block.index,
                    f.block.count,
                    expected.start,
                    expected.end
                );
            }
            if let Some((j, _)) = &by_position[r.position] {
                bail!(
                    "{p}: position {} was already measured in {}",
                    r.position,
                    files[*j].0.display()
                );
            }
            by_position[r.position] = Some((i, r.clone()));
        }
    }
    let missing: Vec<usize> = (0..len).filter(|&k| by_position[k].is_none()).collect();
    if let Some(&k) = missing.first() {
        bail!(
            "--real-from: {} of the {len} positions of the run order have no run (first: {k}); give every block's file",
            missing.len()
        );
    }
    let mut blocks: Vec<BlockRecord> = files
        .iter()
        .map(|(path, f)| {
            let r = f.block.positions(len);
            BlockRecord {
                file: path.display().to_string(),
                index: f.block.index,
                count: f.block.count,
                positions: [r.start, r.end],
                started: f.started.clone(),
                finished: f.finished.clone(),
            }
        })
        .collect();
    blocks.sort_by_key(|b| b.positions);
    Ok(Merged {
        blocks,
        real_runs: by_position
            .into_iter()
            .map(|x| x.expect("checked above").1)
            .collect(),
        load: [first.load[0], files.last().expect("not empty").1.load[1]],
        real_command: first.real_command.clone(),
        real_program: first.real_program.clone(),
        software: first.software.clone(),
    })
}

fn labels(configs: &[HplConfig]) -> String {
    configs
        .iter()
        .map(HplConfig::label)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::analysis::Outcome;

    fn config(p: u32, q: u32, n: u64) -> HplConfig {
        HplConfig { p, q, n, nb: 128 }
    }

    fn run(position: usize, config: usize) -> RealRun {
        RealRun {
            config,
            rep: 0,
            position,
            start: String::new(),
            wall: 1.0,
            load_before: None,
            blas_core: None,
            probe_gflops: Vec::new(),
            probe_gather_ns: Vec::new(),
            outcome: Outcome::Failed {
                reason: "test".into(),
                exit_code: None,
                stderr_tail: String::new(),
                stdout_tail: String::new(),
            },
        }
    }

    fn file(block: Block, configs: &[HplConfig], runs: usize, positions: Range<usize>) -> RealRunsFile {
        RealRunsFile {
            format: FORMAT.into(),
            configs: configs.to_vec(),
            runs_per_config: runs,
            order_seed: 1,
            block,
            real_command: "mpirun".into(),
            real_program: FileRef {
                path: "xhpl".into(),
                sha256: "ab".into(),
            },
            software: Software::default(),
            load: [Some([block.index as f64; 3]), Some([block.index as f64 + 0.5; 3])],
            started: String::new(),
            finished: String::new(),
            real_runs: positions.map(|k| run(k, k % configs.len())).collect(),
        }
    }

    #[test]
    fn blocks_cut_the_order_into_near_equal_contiguous_pieces() {
        let cut: Vec<Range<usize>> = (1..=3)
            .map(|i| Block { index: i, count: 3 }.positions(80))
            .collect();
        assert_eq!(cut, vec![0..26, 26..53, 53..80]);
        assert_eq!(Block::WHOLE.positions(7), 0..7);
        assert_eq!(Block::parse("2/3").unwrap(), Block { index: 2, count: 3 });
        for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
            assert!(Block::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn merged_blocks_give_every_run_once_and_the_outer_loads() {
        let configs = [config(1, 2, 400), config(2, 1, 400)];
        let files: Vec<(PathBuf, RealRunsFile)> = (1..=3)
            .rev()
            .map(|i| {
                let b = Block { index: i, count: 3 };
                (
                    PathBuf::from(format!("b{i}.json")),
                    file(b, &configs, 5, b.positions(10)),
                )
            })
            .collect();
        let m = merge(&files, &configs, 5, 1).unwrap();
        assert_eq!(
            m.real_runs.iter().map(|r| r.position).collect::<Vec<_>>(),
            (0..10).collect::<Vec<_>>()
        );
        // Loads come from the files in the order given: first's before, last's after.
        assert_eq!(m.load, [Some([3.0; 3]), Some([1.5; 3])]);
    }

    #[test]
    fn a_missing_a_foreign_or_a_repeated_block_is_an_error_naming_the_file() {
        let configs = [config(1, 2, 400), config(2, 1, 400)];
        let b1 = Block { index: 1, count: 2 };
        let b2 = Block { index: 2, count: 2 };
        let one = (PathBuf::from("one.json"), file(b1, &configs, 3, b1.positions(6)));
        let two = (PathBuf::from("two.json"), file(b2, &configs, 3, b2.positions(6)));
        let e = merge(std::slice::from_ref(&one), &configs, 3, 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("3 of the 6 positions") && e.contains("first: 3"),
            "{e}"
        );
        let e = merge(&[one.clone(), one.clone()], &configs, 3, 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("one.json: position 0 was already measured in one.json"),
            "{e}"
        );
        let e = merge(&[one.clone(), two.clone()], &configs, 4, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("one.json: 3 runs per configuration"), "{e}");
        let e = merge(&[one.clone(), two.clone()], &configs[..1], 3, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("one.json: measured for the configurations 1x2"), "{e}");
        let mut other = two.clone();
        other.1.real_program.sha256 = "cd".into();
        let e = merge(&[one.clone(), other], &configs, 3, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("two.json: the real program"), "{e}");
        let mut stray = two;
        stray.1.real_runs[0].position = 0;
        let e = merge(&[one, stray], &configs, 3, 1).unwrap_err().to_string();
        assert!(
            e.contains("two.json: run at position 0") && e.contains("block 2/2"),
            "{e}"
        );
    }
}
