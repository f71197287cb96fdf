//! `getopt`, `getopt_long` and `getopt_long_only` with all of their state in
//! one [`Parser`] per program copy (glibc keeps part of it hidden in libc,
//! shared by every rank).
//!
//! Semantics are glibc 2.36's (`posix/getopt.c`), step for step: options are
//! permuted in front of the operands unless the option string starts with
//! `+` (or `POSIXLY_CORRECT` is set, or the POSIX entry point is used: stop
//! at the first operand) or `-` (return operands as option 1); a leading `:`
//! silences the messages and reports a missing argument as `:`; `x:` takes
//! an argument, `x::` an optional one; `W;` makes `-W foo` mean `--foo`;
//! long options match exactly or by an unambiguous abbreviation;
//! `getopt_long_only` also accepts `-foo`. The messages are glibc's, on
//! libc's `stderr`. Like glibc, the parser (re)starts when `optind` is 0 or
//! on its first call.

use std::ffi::{c_char, c_int, CStr};

/// The variables a program reads and writes (`optind`, `opterr`, `optopt`,
/// `optarg`); each program copy's references point here.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct Vars {
    /// Index of the next element of `argv` to look at.
    pub optind: c_int,
    /// Print error messages (non-zero).
    pub opterr: c_int,
    /// The option character that caused the last error.
    pub optopt: c_int,
    /// The argument of the last option, or the operand returned as option 1.
    pub optarg: *mut c_char,
}

/// `struct option` of `<getopt.h>`.
#[repr(C)]
pub(crate) struct LongOption {
    /// Name without the dashes; a null name ends the array.
    pub name: *const c_char,
    /// 0: no argument, 1: required, 2: optional.
    pub has_arg: c_int,
    /// When not null, `*flag = val` and the parser returns 0.
    pub flag: *mut c_int,
    /// The value to return (or store).
    pub val: c_int,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ordering {
    RequireOrder,
    Permute,
    ReturnInOrder,
}

/// One program copy's parser.
#[derive(Debug)]
pub(crate) struct Parser {
    /// The program-visible variables.
    pub vars: Vars,
    initialized: bool,
    /// The parser's own `optopt`, copied out after each call: glibc's starts
    /// at 0 (the program-visible one at `'?'`) and persists across scans.
    optopt: c_int,
    /// The rest of the current group of short options (`-abc`), or null.
    nextchar: *mut c_char,
    ordering: Ordering,
    /// The operands skipped so far: `argv[first_nonopt..last_nonopt]`.
    first_nonopt: c_int,
    last_nonopt: c_int,
}

impl Default for Parser {
    fn default() -> Self {
        Parser {
            vars: Vars {
                optind: 1,
                opterr: 1,
                optopt: b'?' as c_int,
                optarg: std::ptr::null_mut(),
            },
            initialized: false,
            optopt: 0,
            nextchar: std::ptr::null_mut(),
            ordering: Ordering::Permute,
            first_nonopt: 1,
            last_nonopt: 1,
        }
    }
}

/// Which entry point is parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavour {
    /// `getopt`.
    Short,
    /// `__posix_getopt` (what `getopt` is for programs built without `_GNU_SOURCE`).
    Posix,
    /// `getopt_long`.
    Long,
    /// `getopt_long_only`.
    LongOnly,
}

/// Prints one of glibc's messages on libc's `stderr`.
fn complain(msg: String) {
    extern "C" {
        static mut stderr: *mut libc::FILE;
    }
    let Ok(text) = std::ffi::CString::new(msg) else {
        return;
    };
    // Safety: libc's stderr stream, written through stdio like glibc does.
    unsafe {
        libc::fputs(text.as_ptr(), stderr);
    }
}

unsafe fn text(p: *const c_char) -> String {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe { CStr::from_ptr(p).to_string_lossy().into_owned() }
}

unsafe fn strchr(s: *const c_char, c: c_char) -> *const c_char {
    // Safety: the caller upholds this function's contract (see its `# Safety`).
    unsafe { libc::strchr(s, c_int::from(c as u8)) }
}

impl Parser {
    /// One call of the parser.
    ///
    /// # Safety
    /// The arguments are those of a C `getopt_long` call: `argv` holds
    /// `argc` valid C strings, `optstring` is a C string, `longopts` is null
    /// or an array ended by a null name, `longind` null or writable.
    pub(crate) unsafe fn next(
        &mut self,
        flavour: Flavour,
        argc: c_int,
        argv: *mut *mut c_char,
        optstring: *const c_char,
        longopts: *const LongOption,
        longind: *mut c_int,
    ) -> c_int {
        // Safety: the caller upholds this function's contract (see its `# Safety`).
        unsafe {
            let r = self.scan(flavour, argc, argv, optstring, longopts, longind);
            self.vars.optopt = self.optopt;
            r
        }
    }

    unsafe fn scan(
        &mut self,
        flavour: Flavour,
        argc: c_int,
        argv: *mut *mut c_char,
        optstring: *const c_char,
        longopts: *const LongOption,
        longind: *mut c_int,
    ) -> c_int {
        // Safety: the caller upholds this function's contract (see its `# Safety`).
        unsafe {
            let long_only = flavour == Flavour::LongOnly;
            let longopts = if matches!(flavour, Flavour::Long | Flavour::LongOnly) {
                longopts
            } else {
                std::ptr::null()
            };
            let mut print_errors = self.vars.opterr != 0;
            if argc < 1 {
                return -1;
            }
            self.vars.optarg = std::ptr::null_mut();
            let mut optstring = optstring;
            if self.vars.optind == 0 || !self.initialized {
                optstring = self.initialize(optstring, flavour == Flavour::Posix);
            } else if matches!(*optstring as u8, b'-' | b'+') {
                optstring = optstring.add(1);
            }
            if *optstring as u8 == b':' {
                print_errors = false;
            }
            let arg = |i: c_int| *argv.add(i as usize);
            // A long option at `nextchar`, introduced by `prefix`.
            let long = |this: &mut Self, long_only: bool, prefix: &str| {
                this.long_option(
                    argc,
                    argv,
                    optstring,
                    longopts,
                    longind,
                    long_only,
                    print_errors,
                    prefix,
                )
            };
            let nonoption = |i: c_int| {
                let a = arg(i);
                *a as u8 != b'-' || *a.add(1) == 0
            };

            if self.nextchar.is_null() || *self.nextchar == 0 {
                // Advance to the next element; the user may have moved optind back.
                self.last_nonopt = self.last_nonopt.min(self.vars.optind);
                self.first_nonopt = self.first_nonopt.min(self.vars.optind);
                if self.ordering == Ordering::Permute {
                    if self.first_nonopt != self.last_nonopt && self.last_nonopt != self.vars.optind {
                        self.exchange(argv);
                    } else if self.last_nonopt != self.vars.optind {
                        self.first_nonopt = self.vars.optind;
                    }
                    while self.vars.optind < argc && nonoption(self.vars.optind) {
                        self.vars.optind += 1;
                    }
                    self.last_nonopt = self.vars.optind;
                }
                // "--" ends the options: skip it, everything after is an operand.
                if self.vars.optind != argc && CStr::from_ptr(arg(self.vars.optind)).to_bytes() == b"--" {
                    self.vars.optind += 1;
                    if self.first_nonopt != self.last_nonopt && self.last_nonopt != self.vars.optind {
                        self.exchange(argv);
                    } else if self.first_nonopt == self.last_nonopt {
                        self.first_nonopt = self.vars.optind;
                    }
                    self.last_nonopt = argc;
                    self.vars.optind = argc;
                }
                if self.vars.optind == argc {
                    // Point at the operands skipped and moved to the end.
                    if self.first_nonopt != self.last_nonopt {
                        self.vars.optind = self.first_nonopt;
                    }
                    return -1;
                }
                if nonoption(self.vars.optind) {
                    if self.ordering == Ordering::RequireOrder {
                        return -1;
                    }
                    self.vars.optarg = arg(self.vars.optind);
                    self.vars.optind += 1;
                    return 1;
                }
                if !longopts.is_null() {
                    let a = arg(self.vars.optind);
                    if *a.add(1) as u8 == b'-' {
                        self.nextchar = a.add(2);
                        return long(self, long_only, "--");
                    }
                    // With getopt_long_only, "-f" for a valid short option f is
                    // that option, "-fu" is first tried as a long option.
                    if long_only && (*a.add(2) != 0 || strchr(optstring, *a.add(1)).is_null()) {
                        self.nextchar = a.add(1);
                        let code = long(self, long_only, "-");
                        if code != -1 {
                            return code;
                        }
                    }
                }
                self.nextchar = arg(self.vars.optind).add(1);
            }

            // The next short option of the group.
            let c = *self.nextchar;
            self.nextchar = self.nextchar.add(1);
            let spec = strchr(optstring, c);
            if *self.nextchar == 0 {
                self.vars.optind += 1;
            }
            if spec.is_null() || c as u8 == b':' || c as u8 == b';' {
                if print_errors {
                    complain(format!(
                        "{}: invalid option -- '{}'\n",
                        text(arg(0)),
                        c as u8 as char
                    ));
                }
                self.optopt = c_int::from(c as u8);
                return b'?' as c_int;
            }
            let missing = || if *optstring as u8 == b':' { b':' } else { b'?' } as c_int;
            if *spec as u8 == b'W' && *spec.add(1) as u8 == b';' && !longopts.is_null() {
                // "-W foo" is "--foo".
                let name = if *self.nextchar != 0 {
                    self.nextchar
                } else if self.vars.optind == argc {
                    if print_errors {
                        complain(format!(
                            "{}: option requires an argument -- '{}'\n",
                            text(arg(0)),
                            c as u8 as char
                        ));
                    }
                    self.optopt = c_int::from(c as u8);
                    return missing();
                } else {
                    arg(self.vars.optind)
                };
                self.nextchar = name;
                self.vars.optarg = std::ptr::null_mut();
                return long(self, false, "-W ");
            }
            if *spec.add(1) as u8 == b':' {
                if *spec.add(2) as u8 == b':' {
                    // Optional argument: only when attached ("-xvalue").
                    if *self.nextchar != 0 {
                        self.vars.optarg = self.nextchar;
                        self.vars.optind += 1;
                    } else {
                        self.vars.optarg = std::ptr::null_mut();
                    }
                    self.nextchar = std::ptr::null_mut();
                } else {
                    let mut code = c_int::from(c as u8);
                    if *self.nextchar != 0 {
                        self.vars.optarg = self.nextchar;
                        self.vars.optind += 1;
                    } else if self.vars.optind == argc {
                        if print_errors {
                            complain(format!(
                                "{}: option requires an argument -- '{}'\n",
                                text(arg(0)),
                                c as u8 as char
                            ));
                        }
                        self.optopt = c_int::from(c as u8);
                        code = missing();
                    } else {
                        self.vars.optarg = arg(self.vars.optind);
                        self.vars.optind += 1;
                    }
                    self.nextchar = std::ptr::null_mut();
                    return code;
                }
            }
            c_int::from(c as u8)
        }
    }

    /// Starts a scan; returns the option string without its ordering prefix.
    unsafe fn initialize(&mut self, optstring: *const c_char, posixly_correct: bool) -> *const c_char {
        // Safety: the caller upholds this function's contract (see its `# Safety`).
        unsafe {
            if self.vars.optind == 0 {
                self.vars.optind = 1;
            }
            self.first_nonopt = self.vars.optind;
            self.last_nonopt = self.vars.optind;
            self.nextchar = std::ptr::null_mut();
            self.initialized = true;
            match *optstring as u8 {
                b'-' => {
                    self.ordering = Ordering::ReturnInOrder;
                    optstring.add(1)
                }
                b'+' => {
                    self.ordering = Ordering::RequireOrder;
                    optstring.add(1)
                }
                _ => {
                    self.ordering = if posixly_correct || !libc::getenv(c"POSIXLY_CORRECT".as_ptr()).is_null()
                    {
                        Ordering::RequireOrder
                    } else {
                        Ordering::Permute
                    };
                    optstring
                }
            }
        }
    }

    /// Moves the operands skipped so far after the options that followed
    /// them (`argv[first_nonopt..optind]` rotated; glibc's block swaps give
    /// the same order).
    unsafe fn exchange(&mut self, argv: *mut *mut c_char) {
        // Safety: the caller upholds this function's contract (see its `# Safety`).
        unsafe {
            let (bottom, middle, top) = (self.first_nonopt, self.last_nonopt, self.vars.optind);
            if top > middle && middle > bottom {
                let part = std::slice::from_raw_parts_mut(argv.add(bottom as usize), (top - bottom) as usize);
                part.rotate_left((middle - bottom) as usize);
            }
            self.first_nonopt += self.vars.optind - self.last_nonopt;
            self.last_nonopt = self.vars.optind;
        }
    }

    /// A long option at `nextchar` (`name` or `name=value`); -1 when
    /// getopt_long_only should try it as short options instead.
    #[allow(clippy::too_many_arguments)]
    unsafe fn long_option(
        &mut self,
        argc: c_int,
        argv: *mut *mut c_char,
        optstring: *const c_char,
        longopts: *const LongOption,
        longind: *mut c_int,
        long_only: bool,
        print_errors: bool,
        prefix: &str,
    ) -> c_int {
        // Safety: the caller upholds this function's contract (see its `# Safety`).
        unsafe {
            let arg = |i: c_int| *argv.add(i as usize);
            let mut nameend = self.nextchar;
            while *nameend != 0 && *nameend as u8 != b'=' {
                nameend = nameend.add(1);
            }
            let given = std::slice::from_raw_parts(
                self.nextchar as *const u8,
                nameend.offset_from(self.nextchar) as usize,
            );
            let options: Vec<&LongOption> = (0..)
                .map(|i| &*longopts.add(i))
                .take_while(|o| !o.name.is_null())
                .collect();
            let name_of = |o: &LongOption| CStr::from_ptr(o.name).to_bytes();
            let mut found = options.iter().position(|o| name_of(o) == given);
            if found.is_none() {
                // Abbreviations: ambiguous unless every match means the same.
                let mut ambiguous: Vec<usize> = Vec::new();
                for (i, o) in options.iter().enumerate() {
                    if !name_of(o).starts_with(given) {
                        continue;
                    }
                    match found {
                        None => found = Some(i),
                        Some(first) => {
                            let f = options[first];
                            if long_only || f.has_arg != o.has_arg || f.flag != o.flag || f.val != o.val {
                                if ambiguous.is_empty() {
                                    ambiguous.push(first);
                                }
                                ambiguous.push(i);
                            }
                        }
                    }
                }
                if !ambiguous.is_empty() {
                    if print_errors {
                        let mut msg = format!(
                            "{}: option '{prefix}{}' is ambiguous; possibilities:",
                            text(arg(0)),
                            text(self.nextchar)
                        );
                        for i in ambiguous {
                            msg.push_str(&format!(" '{prefix}{}'", text(options[i].name)));
                        }
                        msg.push('\n');
                        complain(msg);
                    }
                    self.nextchar = self.nextchar.add(libc::strlen(self.nextchar));
                    self.vars.optind += 1;
                    self.optopt = 0;
                    return b'?' as c_int;
                }
            }
            let Some(index) = found else {
                // Not a long option: an error, unless getopt_long_only can read
                // it as short options.
                if !long_only
                    || *arg(self.vars.optind).add(1) as u8 == b'-'
                    || strchr(optstring, *self.nextchar).is_null()
                {
                    if print_errors {
                        complain(format!(
                            "{}: unrecognized option '{prefix}{}'\n",
                            text(arg(0)),
                            text(self.nextchar)
                        ));
                    }
                    self.nextchar = std::ptr::null_mut();
                    self.vars.optind += 1;
                    self.optopt = 0;
                    return b'?' as c_int;
                }
                return -1;
            };
            let option = options[index];
            self.vars.optind += 1;
            self.nextchar = std::ptr::null_mut();
            if *nameend != 0 {
                if option.has_arg != 0 {
                    self.vars.optarg = nameend.add(1);
                } else {
                    if print_errors {
                        complain(format!(
                            "{}: option '{prefix}{}' doesn't allow an argument\n",
                            text(arg(0)),
                            text(option.name)
                        ));
                    }
                    self.optopt = option.val;
                    return b'?' as c_int;
                }
            } else if option.has_arg == 1 {
                if self.vars.optind < argc {
                    self.vars.optarg = arg(self.vars.optind);
                    self.vars.optind += 1;
                } else {
                    if print_errors {
                        complain(format!(
                            "{}: option '{prefix}{}' requires an argument\n",
                            text(arg(0)),
                            text(option.name)
                        ));
                    }
                    self.optopt = option.val;
                    return if *optstring as u8 == b':' { b':' } else { b'?' } as c_int;
                }
            }
            if !longind.is_null() {
                *longind = index as c_int;
            }
            if !option.flag.is_null() {
                *option.flag = option.val;
                return 0;
            }
            option.val
        }
    }
}

#[cfg(test)]
mod tests {
    //! Differential tests against glibc's own parser (this test binary does
    //! not export ours, so `libc::getopt*` are glibc's).
    use super::*;
    use std::ffi::CString;

    extern "C" {
        static mut optind: c_int;
        static mut opterr: c_int;
        static mut optopt: c_int;
        static mut optarg: *mut c_char;
        fn getopt_long(
            argc: c_int,
            argv: *const *mut c_char,
            opts: *const c_char,
            long: *const LongOption,
            index: *mut c_int,
        ) -> c_int;
        fn getopt_long_only(
            argc: c_int,
            argv: *const *mut c_char,
            opts: *const c_char,
            long: *const LongOption,
            index: *mut c_int,
        ) -> c_int;
        fn __posix_getopt(argc: c_int, argv: *const *mut c_char, opts: *const c_char) -> c_int;
    }

    /// Everything one call returns or changes.
    #[derive(Debug, PartialEq)]
    struct Step {
        ret: c_int,
        optind: c_int,
        optopt: c_int,
        optarg: Option<String>,
        longind: c_int,
        flag: c_int,
        argv: Vec<String>,
    }

    unsafe fn show(p: *const c_char) -> Option<String> {
        // Safety: a non-null pointer into the test's argv or the parser's strings.
        (!p.is_null()).then(|| unsafe { text(p) })
    }

    /// Parses `args` to the end with glibc (`ours == false`) or with ours.
    fn parse(flavour: Flavour, args: &[&str], optstring: &str, ours: bool) -> Vec<Step> {
        let owned: Vec<CString> = args.iter().map(|a| CString::new(*a).unwrap()).collect();
        let mut argv: Vec<*mut c_char> = owned.iter().map(|c| c.as_ptr() as *mut c_char).collect();
        argv.push(std::ptr::null_mut());
        let opts = CString::new(optstring).unwrap();
        // (name, has_arg, val); "flagged" sets `flag` instead of returning.
        let table = [
            ("alpha", 0, b'a' as c_int),
            ("alps", 1, b'p' as c_int),
            ("beta", 1, b'b' as c_int),
            ("gamma", 2, b'g' as c_int),
            ("flagged", 0, 7),
            ("opt", 2, b'o' as c_int),
        ];
        let names: Vec<CString> = table.iter().map(|t| CString::new(t.0).unwrap()).collect();
        let mut flag: c_int = 0;
        let mut longs: Vec<LongOption> = table
            .iter()
            .zip(&names)
            .map(|(&(_, has_arg, val), name)| LongOption {
                name: name.as_ptr(),
                has_arg,
                flag: std::ptr::null_mut(),
                val,
            })
            .collect();
        longs[4].flag = &mut flag;
        longs.push(LongOption {
            name: std::ptr::null(),
            has_arg: 0,
            flag: std::ptr::null_mut(),
            val: 0,
        });
        let argc = args.len() as c_int;
        let mut parser = Parser::default();
        parser.vars.opterr = 0;
        let mut steps = Vec::new();
        // Safety: valid argv, option strings and long options, as C would pass them.
        unsafe {
            if !ours {
                optind = 0; // glibc restarts its scan
                opterr = 0;
            }
            for _ in 0..2 * args.len() + 4 {
                let mut longind: c_int = -1;
                flag = 0;
                let ret = if ours {
                    parser.next(
                        flavour,
                        argc,
                        argv.as_mut_ptr(),
                        opts.as_ptr(),
                        longs.as_ptr(),
                        &mut longind,
                    )
                } else {
                    match flavour {
                        Flavour::Posix => __posix_getopt(argc, argv.as_ptr(), opts.as_ptr()),
                        Flavour::Short => libc::getopt(argc, argv.as_ptr(), opts.as_ptr()),
                        Flavour::Long => {
                            getopt_long(argc, argv.as_ptr(), opts.as_ptr(), longs.as_ptr(), &mut longind)
                        }
                        Flavour::LongOnly => {
                            getopt_long_only(argc, argv.as_ptr(), opts.as_ptr(), longs.as_ptr(), &mut longind)
                        }
                    }
                };
                let (ind, opt, arg) = if ours {
                    (parser.vars.optind, parser.vars.optopt, show(parser.vars.optarg))
                } else {
                    (optind, optopt, show(optarg))
                };
                // optopt is only defined after an error (glibc's carries over
                // from this process's earlier scans otherwise).
                let opt = if ret == b'?' as c_int || ret == b':' as c_int {
                    opt
                } else {
                    0
                };
                steps.push(Step {
                    ret,
                    optind: ind,
                    optopt: opt,
                    optarg: arg,
                    longind,
                    flag,
                    argv: argv[..args.len()].iter().map(|p| text(*p)).collect(),
                });
                if ret == -1 {
                    break;
                }
            }
        }
        steps
    }

    const WORDS: &[&str] = &[
        "-a",
        "-b",
        "-bX",
        "-c",
        "-cY",
        "-ab",
        "-ba",
        "-abc",
        "-x",
        "-",
        "--",
        "file",
        "other",
        "--alpha",
        "--al",
        "--alp",
        "--alps=3",
        "--beta",
        "--beta=q",
        "--gamma",
        "--gamma=z",
        "--flagged",
        "--nope",
        "--alpha=1",
        "-W",
        "alpha",
        "-Wbeta=2",
        "-alpha",
        "-al",
        "-op",
        "-o",
        "--o",
        "--opt=v",
        ":",
        "-:",
        "-;",
    ];
    const OPTSTRINGS: &[&str] = &[
        "ab:c::W;", "+ab:c", "-ab:c::", ":ab:c", "abo::", "W;ab:", "-:ab:", "+:W;b:",
    ];

    #[test]
    fn every_flavour_agrees_with_glibc_on_random_command_lines() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for case in 0..4000 {
            let n = (next() % 7) as usize;
            let mut args = vec!["prog"];
            for _ in 0..n {
                args.push(WORDS[(next() % WORDS.len() as u64) as usize]);
            }
            let optstring = OPTSTRINGS[(next() % OPTSTRINGS.len() as u64) as usize];
            let flavour = [Flavour::Short, Flavour::Posix, Flavour::Long, Flavour::LongOnly][case % 4];
            let theirs = parse(flavour, &args, optstring, false);
            let ours = parse(flavour, &args, optstring, true);
            assert_eq!(ours, theirs, "{flavour:?} {optstring:?} {args:?}");
        }
    }

    #[test]
    fn a_group_of_short_options_survives_interleaving_with_another_parser() {
        // Two program copies parse in turns, one call each: glibc's single
        // hidden position cannot do this, two parsers can.
        let a: Vec<CString> = ["p", "-vq", "-n", "7"]
            .iter()
            .map(|s| CString::new(*s).unwrap())
            .collect();
        let b: Vec<CString> = ["p", "-qv", "-n", "8"]
            .iter()
            .map(|s| CString::new(*s).unwrap())
            .collect();
        let mut av: Vec<*mut c_char> = a.iter().map(|c| c.as_ptr() as *mut c_char).collect();
        let mut bv: Vec<*mut c_char> = b.iter().map(|c| c.as_ptr() as *mut c_char).collect();
        let opts = CString::new("vqn:").unwrap();
        let (mut pa, mut pb) = (Parser::default(), Parser::default());
        let mut seen = (String::new(), String::new());
        // Safety: valid argv and option string.
        unsafe {
            for _ in 0..4 {
                let ra = pa.next(
                    Flavour::Short,
                    4,
                    av.as_mut_ptr(),
                    opts.as_ptr(),
                    std::ptr::null(),
                    std::ptr::null_mut(),
                );
                let rb = pb.next(
                    Flavour::Short,
                    4,
                    bv.as_mut_ptr(),
                    opts.as_ptr(),
                    std::ptr::null(),
                    std::ptr::null_mut(),
                );
                seen.0.push(char::from_u32(ra as u32).unwrap_or('$'));
                seen.1.push(char::from_u32(rb as u32).unwrap_or('$'));
            }
        }
        assert_eq!(seen, ("vqn$".to_string(), "qvn$".to_string()));
    }
}
