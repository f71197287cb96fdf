#!/usr/bin/env python3
"""Generates the Fortran interface of smpirun from include/mpi.h.

Writes two files (both committed; `--check` fails when either is stale, and the
unit test `abi::fortran::tests::generated_files_are_up_to_date` runs it):

- include/mpif.h: every integer constant of mpi.h with the same value, as
  `INTEGER X` + `PARAMETER (X=v)` lines that are valid fixed-form *and*
  free-form Fortran (statements start in column 7, no line is longer than 72
  columns, no continuation lines, comments start with `!` in column 1), plus
  the Fortran-only constants and the special addresses as common blocks.
- src/abi/fortran/generated.rs: one `mpi_xxx_` / `pmpi_xxx_` pair per C
  function of mpi.h (gfortran's names: lowercase, one trailing underscore),
  taking every argument by reference, `ierror` last and the hidden lengths of
  CHARACTER arguments after it. Each converts its arguments (see `Param`) and
  calls the C function; the hand-written helpers it uses are in
  src/abi/fortran.rs, and the functions that need more than a conversion per
  argument (callbacks, attributes, MPI_Init, MPI_Wtime...) are written there by
  hand and listed in HAND_WRITTEN below.

Usage: tools/gen_fortran.py [--check]   (run from anywhere)
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MPI_H = ROOT / "include" / "mpi.h"
MPIF_H = ROOT / "include" / "mpif.h"
BINDINGS = ROOT / "src" / "abi" / "fortran" / "generated.rs"

# Functions written by hand in src/abi/fortran.rs (their Fortran forms differ
# from a per-argument conversion of the C prototype).
HAND_WRITTEN = {
    "MPI_Init", "MPI_Init_thread", "MPI_Wtime", "MPI_Wtick", "MPI_Pcontrol",
    "MPI_Buffer_detach", "MPI_Grequest_start",
    "MPI_Comm_create_keyval", "MPI_Type_create_keyval", "MPI_Keyval_create",
    "MPI_Comm_set_attr", "MPI_Comm_get_attr", "MPI_Attr_put", "MPI_Attr_get",
    "MPI_Type_set_attr", "MPI_Type_get_attr",
    "MPI_Win_create_keyval", "MPI_Win_set_attr", "MPI_Win_get_attr",
    "MPI_Info_get_string", "MPI_Info_create_env", "MPI_Aint_add", "MPI_Aint_diff",
}

# C functions with no Fortran binding besides those skipped by rule (C<->Fortran
# handle conversion: the Fortran side has nothing to convert; the `_c` forms).
NO_FORTRAN = set()

# Deprecated MPI-1 functions whose address-sized C arguments are default
# INTEGERs in Fortran (MPI_TYPE_HVECTOR's stride, MPI_ADDRESS's result...).
FINT_AINT = {
    "MPI_Type_hvector": {"stride"},
    "MPI_Type_hindexed": {"displacements"},
    "MPI_Type_struct": {"displacements"},
    "MPI_Type_extent": {"extent"},
    "MPI_Type_lb": {"displacement"},
    "MPI_Type_ub": {"displacement"},
    "MPI_Address": {"address"},
}

# Indices (0-based in C, 1-based in Fortran) written by these functions.
INDEX_OUT = {
    "MPI_Waitany": "index", "MPI_Testany": "index",
    "MPI_Waitsome": "array_of_indices", "MPI_Testsome": "array_of_indices",
}

# Function-pointer types whose C and Fortran calling conventions agree (all
# arguments are pointers in both), so the program's procedure is passed as is.
SAME_ABI_CALLBACKS = {
    "MPI_User_function", "MPI_Comm_errhandler_function", "MPI_Handler_function",
    "MPI_Win_errhandler_function",
    "MPI_File_errhandler_function",
}

INT_TYPES = {
    "int", "MPI_Comm", "MPI_Datatype", "MPI_Request", "MPI_Op", "MPI_Group", "MPI_Errhandler",
    "MPI_Info", "MPI_Win", "MPI_File", "MPI_Message", "MPI_Fint",
}
WIDE_TYPES = {"MPI_Aint": "isize", "MPI_Count": "i64", "MPI_Offset": "i64"}

# Constants only Fortran has (name, value or the mpi.h name it equals).
FORTRAN_ONLY = [
    ("MPI_STATUS_SIZE", "6"),
    ("MPI_SOURCE", "1"),
    ("MPI_TAG", "2"),
    ("MPI_ERROR", "3"),
    ("MPI_ADDRESS_KIND", "8"),
    ("MPI_OFFSET_KIND", "8"),
    ("MPI_COUNT_KIND", "8"),
    ("MPI_INTEGER_KIND", "4"),
]

# The special addresses: (Fortran name, declaration, common block). The
# bindings recognise the blocks' addresses (src/abi/fortran.rs, which defines
# them in smpirun under the same symbol names).
SPECIAL = [
    ("MPI_BOTTOM", "INTEGER MPI_BOTTOM", "MPI_FORTRAN_BOTTOM"),
    ("MPI_IN_PLACE", "INTEGER MPI_IN_PLACE", "MPI_FORTRAN_IN_PLACE"),
    ("MPI_STATUS_IGNORE", "INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)", "MPI_FORTRAN_STATUS_IGNORE"),
    ("MPI_STATUSES_IGNORE", "INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)", "MPI_FORTRAN_STATUSES_IGNORE"),
    ("MPI_ERRCODES_IGNORE", "INTEGER MPI_ERRCODES_IGNORE(1)", "MPI_FORTRAN_ERRCODES_IGNORE"),
    ("MPI_UNWEIGHTED", "INTEGER MPI_UNWEIGHTED(1)", "MPI_FORTRAN_UNWEIGHTED"),
    ("MPI_WEIGHTS_EMPTY", "INTEGER MPI_WEIGHTS_EMPTY(1)", "MPI_FORTRAN_WEIGHTS_EMPTY"),
    ("MPI_ARGV_NULL", "CHARACTER*1 MPI_ARGV_NULL(1)", "MPI_FORTRAN_ARGV_NULL"),
    ("MPI_ARGVS_NULL", "CHARACTER*1 MPI_ARGVS_NULL(1,1)", "MPI_FORTRAN_ARGVS_NULL"),
]

# Predefined procedures (attribute copy/delete functions) and functions.
EXTERNALS = [
    "MPI_NULL_COPY_FN", "MPI_NULL_DELETE_FN", "MPI_DUP_FN",
    "MPI_COMM_NULL_COPY_FN", "MPI_COMM_NULL_DELETE_FN", "MPI_COMM_DUP_FN",
    "MPI_TYPE_NULL_COPY_FN", "MPI_TYPE_NULL_DELETE_FN", "MPI_TYPE_DUP_FN",
    "MPI_WIN_NULL_COPY_FN", "MPI_WIN_NULL_DELETE_FN", "MPI_WIN_DUP_FN",
]
DOUBLE_FUNCTIONS = ["MPI_WTIME", "MPI_WTICK", "PMPI_WTIME", "PMPI_WTICK"]
# Functions of kind MPI_ADDRESS_KIND (INTEGER*8: valid in fixed and free form).
ADDRESS_FUNCTIONS = ["MPI_AINT_ADD", "MPI_AINT_DIFF", "PMPI_AINT_ADD", "PMPI_AINT_DIFF"]


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def header_constants(text):
    """Integer constants of mpi.h in order: name -> int (aliases resolved)."""
    values = {}
    for line in strip_comments(text).splitlines():
        m = re.match(r"\s*#define\s+(MPI_\w+)\s+(.+?)\s*$", line)
        if not m:
            continue
        name, v = m.group(1), m.group(2).strip()
        n = re.fullmatch(r"\(?\s*(-?\d+)\s*\)?", v)
        if n:
            values[name] = int(n.group(1))
        elif v in values:
            values[name] = values[v]
    return values


class Param:
    """One C parameter and how its Fortran counterpart is converted.

    kinds: ival (int-sized value), wval (MPI_Aint/Count/Offset value), ptr
    (passed through: Fortran INTEGER arrays and outputs are C ints), buf
    (choice buffer: MPI_BOTTOM/MPI_IN_PLACE mapped), weights
    (MPI_UNWEIGHTED/MPI_WEIGHTS_EMPTY mapped), str_in, str_out, status_in,
    status_out, status_inout, statuses, fint_val / fint_out / fint_array
    (FINT_AINT), callback (SAME_ABI_CALLBACKS).
    """

    def __init__(self, func, text):
        self.text = text
        m = re.match(r"(.*?)(\w+)\s*((?:\[[^\]]*\])*)$", text.strip())
        if not m:
            raise ValueError(f"{func}: cannot parse parameter `{text}`")
        decl, self.name, arrays = m.group(1), m.group(2), m.group(3)
        # C parameter names that are Rust keywords.
        self.name = {"fn": "function", "type": "datatype"}.get(self.name, self.name)
        self.const = "const" in decl.split()
        base = [w for w in decl.replace("*", " ").split() if w != "const"]
        if len(base) != 1:
            raise ValueError(f"{func}: cannot parse parameter `{text}`")
        self.base = base[0]
        self.depth = decl.count("*") + arrays.count("[")
        self.kind = self.classify(func)

    def classify(self, func):
        b, d = self.base, self.depth
        if b in SAME_ABI_CALLBACKS and d == 1:
            return "callback"
        if func in FINT_AINT and self.name in FINT_AINT[func]:
            if d == 0:
                return "fint_val"
            return "fint_array" if "[" in self.text else "fint_out"
        if b in INT_TYPES:
            if d == 0:
                return "ival"
            if self.name in ("sourceweights", "destweights", "weights"):
                return "weights"
            return "ptr"
        if b in WIDE_TYPES:
            return "wval" if d == 0 else "ptr"
        if b == "void" and d == 1:
            return "buf"
        if b == "char" and d == 1:
            return "str_in" if self.const else "str_out"
        if b == "MPI_Status" and d == 1:
            if self.name == "array_of_statuses":
                return "statuses"
            if self.const:
                return "status_in"
            return "status_inout" if func.startswith("MPI_Status_set") else "status_out"
        raise ValueError(f"{func}: no Fortran conversion for parameter `{self.text}`")


def prototypes(text):
    """(return type, name, [param text]) of every MPI_ function of mpi.h."""
    body = strip_comments(text)
    body = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("#"))
    out = []
    for m in re.finditer(r"(\w[\w\s\*]*?)\b(MPI_\w+)\s*\(([^()]*)\)\s*;", body):
        ret, name, params = " ".join(m.group(1).split()), m.group(2), m.group(3).strip()
        if ret.startswith("typedef"):
            continue
        plist = [] if params in ("", "void") else [p.strip() for p in params.split(",")]
        out.append((ret, name, plist))
    return out


def skip_reason(ret, name, plist):
    if name in HAND_WRITTEN:
        return "hand"
    if name in NO_FORTRAN or name.upper() == name or name.endswith("_c"):
        return "none"
    if re.search(r"_(c2f|f2c)$", name) or "..." in plist:
        return "none"
    return None


def rust_fn(ret, name, plist):
    """The Rust source of one binding pair."""
    params = [Param(name, p) for p in plist]
    fname = name.lower() + "_"
    args, hidden, pre, call, post = [], [], [], [], []
    by_name = {p.name: p for p in params}
    for p in params:
        n = p.name
        k = p.kind
        if k == "ival":
            args.append(f"{n}: *const c_int")
            call.append(f"*{n}")
        elif k == "wval":
            args.append(f"{n}: *const {WIDE_TYPES[p.base]}")
            call.append(f"*{n}")
        elif k in ("ptr", "callback"):
            args.append(f"{n}: *mut c_void")
            call.append(n)
        elif k == "buf":
            args.append(f"{n}: *mut c_void")
            call.append(f"choice_buf({n})")
        elif k == "weights":
            args.append(f"{n}: *mut c_void")
            call.append(f"weight_array({n})")
        elif k == "str_in":
            args.append(f"{n}: *const c_char")
            hidden.append(f"{n}_len: usize")
            trim = "trim_both" if name.startswith("MPI_Info") else "trim_trailing"
            pre.append(f"let {n}_c = {trim}({n}, {n}_len);")
            call.append(f"{n}_c.as_ptr() as *mut c_void")
        elif k == "str_out":
            args.append(f"{n}: *mut c_char")
            hidden.append(f"{n}_len: usize")
            pre.append(f"let mut {n}_c = out_string_buffer({n}_len);")
            call.append(f"{n}_c.as_mut_ptr().cast()")
            if "flag" in by_name:
                # Written only when found (MPI_INFO_GET: an absent key leaves it as it was).
                post.append(f"if *flag.cast::<c_int>() != 0 {{ blank_pad(&{n}_c, {n}, {n}_len); }}")
            else:
                post.append(f"blank_pad(&{n}_c, {n}, {n}_len);")
        elif k == "status_in":
            args.append(f"{n}: *mut c_void")
            pre.append(f"let mut {n}_c = status_in({n});")
            call.append(f"(&raw mut {n}_c).cast()")
        elif k in ("status_out", "status_inout"):
            args.append(f"{n}: *mut c_void")
            init = "status_in" if k == "status_inout" else "status_out"
            pre.append(f"let mut {n}_c = {init}({n});")
            call.append(f"status_ptr(&mut {n}_c, {n})")
            post.append(f"status_back(&{n}_c, {n});")
        elif k == "statuses":
            args.append(f"{n}: *mut c_void")
            count = "count" if "count" in by_name else "incount"
            written = f"*{count}" if "outcount" not in by_name else "*outcount.cast::<c_int>()"
            pre.append(f"let mut {n}_c = statuses_buffer(*{count});")
            call.append(f"statuses_ptr(&mut {n}_c, {n})")
            post.append(f"statuses_back(&{n}_c, {n}, {written});")
        elif k == "fint_val":
            args.append(f"{n}: *const c_int")
            call.append(f"*{n} as isize")
        elif k == "fint_array":
            args.append(f"{n}: *const c_int")
            pre.append(f"let {n}_c = widen(*count, {n});")
            call.append(f"{n}_c.as_ptr() as *mut c_void")
        elif k == "fint_out":
            args.append(f"{n}: *mut c_int")
            pre.append(f"let mut {n}_c: isize = 0;")
            call.append(f"(&raw mut {n}_c).cast()")
            post.append(f"rc = narrow(rc, {n}_c, {n}, \"{name}\");")
        else:
            raise AssertionError(k)
    if name in INDEX_OUT:
        p = INDEX_OUT[name]
        if p == "index":
            post.append("one_based(index, 1);")
        else:
            post.append("one_based(array_of_indices, *outcount.cast::<c_int>());")
    args.append("ierror: *mut c_int")
    args += hidden
    # Outputs are copied back whatever the return code (MPI leaves them
    # undefined on error; copying keeps the bindings branch-free).
    lines = []
    lines.append(f"    {fname} / p{fname} ({', '.join(args)}) {{")
    for s in pre:
        lines.append(f"        {s}")
    mut = "mut " if any(s.startswith("rc = ") for s in post) else ""
    lines.append(f"        let {mut}rc = {name}({', '.join(call)});")
    for s in post:
        lines.append(f"        {s}")
    lines.append("        set_ierror(ierror, rc);")
    lines.append("    }")
    return "\n".join(lines)


def extern_decl(ret, name, plist):
    params = [Param(name, p) for p in plist]
    tys = []
    for p in params:
        if p.kind == "ival":
            tys.append("c_int")
        elif p.kind == "wval":
            tys.append(WIDE_TYPES[p.base])
        elif p.kind == "fint_val":
            tys.append("isize")
        else:
            tys.append("*mut c_void")
    named = [f"{p.name}: {t}" for p, t in zip(params, tys)]
    return f"    fn {name}({', '.join(named)}) -> c_int;"


def gen_bindings(text):
    protos = prototypes(text)
    funcs, externs, skipped = [], [], []
    seen = set()
    for ret, name, plist in protos:
        if name in seen:
            continue
        seen.add(name)
        why = skip_reason(ret, name, plist)
        if why:
            if why == "none":
                skipped.append(name)
            continue
        if ret != "int":
            raise ValueError(f"{name}: returns {ret}, add it to HAND_WRITTEN or NO_FORTRAN")
        funcs.append(rust_fn(ret, name, plist))
        externs.append(extern_decl(ret, name, plist))
    out = [
        "// @generated by smpi-shim/tools/gen_fortran.py from include/mpi.h: do not edit.",
        "//! The generated Fortran bindings: one `mpi_xxx_` / `pmpi_xxx_` pair per C",
        "//! function of `mpi.h` whose arguments convert one by one (see",
        "//! `tools/gen_fortran.py` for the conversions, `abi/fortran.rs` for the helpers).",
        f"//! {len(funcs)} functions; C-only functions left out: {', '.join(skipped)}.",
        "",
        "use std::ffi::{c_char, c_int, c_void};",
        "",
        "use super::*;",
        "",
        "// The C functions, exported by the other `abi` modules. Pointer",
        "// arguments are declared `*mut c_void` whatever their C type.",
        "#[allow(clashing_extern_declarations)]",
        "extern \"C\" {",
        *externs,
        "}",
        "",
        "fortran_bindings! {",
        "\n\n".join(funcs),
        "}",
        "",
    ]
    return "\n".join(out), len(funcs)


def fortran_lines(stmt):
    """`stmt` as fixed/free-form compatible lines (column 7, at most 72 columns)."""
    line = "      " + stmt
    if len(line) > 72:
        raise ValueError(f"mpif.h line longer than 72 columns: {line}")
    return line


def gen_mpif(text):
    values = header_constants(text)
    lines = [
        "! mpif.h -- the MPI Fortran constants of our simulator (smpirun).",
        "! @generated by smpi-shim/tools/gen_fortran.py from mpi.h: do not edit.",
        "! Valid as fixed-form and free-form source: statements start in",
        "! column 7, no line passes column 72, comments start with '!'.",
        "! Every value equals the one of the same name in mpi.h.",
    ]
    skip = {"MPI_VERSION", "MPI_SUBVERSION"}
    consts = [(n, v) for n, v in values.items() if n not in skip]
    consts = [("MPI_VERSION", values["MPI_VERSION"]), ("MPI_SUBVERSION", values["MPI_SUBVERSION"])] + consts
    for n, v in FORTRAN_ONLY:
        consts.append((n, values[v] if v in values else int(v)))
    upper = [n.upper() for n, _ in consts]
    dups = {n for n in upper if upper.count(n) > 1}
    if dups:
        raise ValueError(f"constants equal in Fortran (case-insensitive): {sorted(dups)}")
    for n, v in consts:
        lines.append(fortran_lines(f"INTEGER {n}"))
        lines.append(fortran_lines(f"PARAMETER ({n}={v})"))
    lines.append("! Special addresses: the bindings recognise these variables.")
    for n, decl, block in SPECIAL:
        lines.append(fortran_lines(decl))
        lines.append(fortran_lines(f"COMMON /{block}/ {n}"))
    lines.append("! Predefined attribute callbacks and functions.")
    for n in EXTERNALS:
        lines.append(fortran_lines(f"EXTERNAL {n}"))
    for n in DOUBLE_FUNCTIONS:
        lines.append(fortran_lines(f"DOUBLE PRECISION {n}"))
        lines.append(fortran_lines(f"EXTERNAL {n}"))
    for n in ADDRESS_FUNCTIONS:
        lines.append(fortran_lines(f"INTEGER*8 {n}"))
        lines.append(fortran_lines(f"EXTERNAL {n}"))
    return "\n".join(lines) + "\n"


def main():
    check = "--check" in sys.argv[1:]
    text = MPI_H.read_text()
    bindings, n = gen_bindings(text)
    mpif = gen_mpif(text)
    stale = []
    for path, content in ((MPIF_H, mpif), (BINDINGS, bindings)):
        old = path.read_text() if path.exists() else None
        if old != content:
            stale.append(path)
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content)
    if check and stale:
        names = ", ".join(str(p.relative_to(ROOT)) for p in stale)
        print(f"stale: {names}: run smpi-shim/tools/gen_fortran.py", file=sys.stderr)
        return 1
    if not check:
        print(f"{n} Fortran bindings; wrote {', '.join(str(p.relative_to(ROOT)) for p in stale) or 'nothing'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
