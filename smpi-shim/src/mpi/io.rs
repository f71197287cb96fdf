//! MPI-IO (MPI chapter 14): files opened collectively, read and written through views, with
//! individual and shared file pointers, timed as SMPI 3.32 times them.
//!
//! # Data
//! Every MPI file is a real file (its path as given; a relative path is relative to smpirun's
//! working directory), so what a program writes is there after the run and a read returns what
//! was written. The data follows MPI exactly: views (displacement, etype, filetype, holes
//! included), individual pointers in etypes, the shared pointer, ordered accesses in rank order,
//! reads that stop at the end of the file (the status counts what was read). A write's data goes
//! to the file when the call starts, a read's is taken when the call ends, so every access a
//! program orders (by a barrier, a collective, a sync) sees the earlier ones.
//!
//! # Time (as SMPI 3.32, `smpi_file.cpp`; non-blocking forms are not in SMPI)
//! Each rank's handle keeps SMPI's own view of the file: a byte position and the file size it
//! knows (the size at open, grown by its own writes and seeks), both moved as SMPI moves them
//! (which ignores views: an access moves by `count × extent` bytes from the byte position).
//! - The disk: the first of the rank's host's disks (its own, then the ones mounted from other
//!   hosts with the `remote_disk` = `mount:disk:host` property) whose `mount` (default `/`) is
//!   the longest prefix of the path; a path without `/` or starting with `./` uses the first
//!   disk. A remote disk adds a transfer of the data between the two hosts (after a read,
//!   before a write). A host without disks (or a path no mount covers) is an error in SMPI; here
//!   its I/O takes no simulated time, and smpirun warns once per host.
//! - `read`/`write` (`_at`, and each rank's part of the collective forms): one disk read or write
//!   of `count × size` bytes — a read only up to the size the handle knows, nothing on an
//!   empty file (see [`simcore::engine`] for how concurrent I/Os share a disk).
//! - `_shared`: under a mutex shared by the ranks (first come, first served), so shared-pointer
//!   accesses go one at a time, disk time included.
//! - `_all`, `_at_all`: two allgathers of 8 bytes (each rank's byte range); if the ranges are
//!   contiguous and the datatype too (or on one rank), each rank does its own I/O; otherwise
//!   SMPI's two-phase scheme: rank `r` accesses its `1/n`-th of the overall range (the bytes of it
//!   some rank wants), then an alltoall of the sizes each sends to each and an alltoallv of them.
//! - `_ordered`: a scan of 8 bytes, the `_all` algorithm, then a 1-byte broadcast from the last
//!   rank (SMPI's inclusive scan places each rank one share further than MPI does; its times are
//!   reproduced, the data goes where MPI says).
//! - open: an allgather and two broadcasts of 8 bytes; close: three barriers; `set_view`, `sync`:
//!   a barrier; `set_size`: a disk write of `size` bytes on every rank (as SMPI); `seek_shared`:
//!   the mutex.
//! - Non-blocking (`iread`, ...) and split collective (`_begin`/`_end`) forms, which SMPI 3.32
//!   does not implement: the blocking operation at the call, and a request complete at once
//!   (the `_end` call returns the status).
//!
//! # Errors
//! Errors go to the file's error handler, `MPI_ERRORS_RETURN` unless the program sets another
//! (MPI's default for files; that of `MPI_FILE_NULL` is used by `MPI_File_open`, `MPI_File_delete`
//! and calls on an invalid handle). Messages name the call, the argument and the file.

use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::c_int;
use std::os::unix::fs::FileExt;
use std::rc::Rc;

use simcore::platform::{DiskId, HostId};
use simcore::ActivityId;

use crate::coll::{self, CommView};
use crate::mpi::datatype::{Datatype, MPI_BYTE};

use super::*;

pub(crate) const MPI_ERR_FILE: i32 = 39;
pub(crate) const MPI_ERR_NOT_SAME: i32 = 40;
pub(crate) const MPI_ERR_AMODE: i32 = 41;
pub(crate) const MPI_ERR_UNSUPPORTED_DATAREP: i32 = 42;
pub(crate) const MPI_ERR_NO_SUCH_FILE: i32 = 43;
pub(crate) const MPI_ERR_FILE_EXISTS: i32 = 44;
pub(crate) const MPI_ERR_BAD_FILE: i32 = 45;
pub(crate) const MPI_ERR_ACCESS: i32 = 46;
pub(crate) const MPI_ERR_NO_SPACE: i32 = 47;
pub(crate) const MPI_ERR_QUOTA: i32 = 48;
pub(crate) const MPI_ERR_READ_ONLY: i32 = 49;
pub(crate) const MPI_ERR_FILE_IN_USE: i32 = 50;
pub(crate) const MPI_ERR_DUP_DATAREP: i32 = 51;
pub(crate) const MPI_ERR_CONVERSION: i32 = 52;
pub(crate) const MPI_ERR_IO: i32 = 53;

pub(crate) const MPI_MODE_CREATE: i32 = 1;
pub(crate) const MPI_MODE_RDONLY: i32 = 2;
pub(crate) const MPI_MODE_WRONLY: i32 = 4;
pub(crate) const MPI_MODE_RDWR: i32 = 8;
pub(crate) const MPI_MODE_DELETE_ON_CLOSE: i32 = 16;
pub(crate) const MPI_MODE_UNIQUE_OPEN: i32 = 32;
pub(crate) const MPI_MODE_EXCL: i32 = 64;
pub(crate) const MPI_MODE_APPEND: i32 = 128;
pub(crate) const MPI_MODE_SEQUENTIAL: i32 = 256;
const ALL_MODES: i32 = MPI_MODE_CREATE
    | MPI_MODE_RDONLY
    | MPI_MODE_WRONLY
    | MPI_MODE_RDWR
    | MPI_MODE_DELETE_ON_CLOSE
    | MPI_MODE_UNIQUE_OPEN
    | MPI_MODE_EXCL
    | MPI_MODE_APPEND
    | MPI_MODE_SEQUENTIAL;

pub(crate) const MPI_SEEK_SET: i32 = 600;
pub(crate) const MPI_SEEK_CUR: i32 = 602;
pub(crate) const MPI_SEEK_END: i32 = 604;
pub(crate) const MPI_DISPLACEMENT_CURRENT: i64 = -54278278;

const MPI_OFFSET: i32 = 27;
const MPI_SUM: i32 = 3;

/// The text of the MPI-IO error classes (`MPI_Error_string`).
pub(crate) fn error_string(code: i32) -> Option<&'static str> {
    Some(match code {
        MPI_ERR_FILE => "MPI_ERR_FILE: invalid file handle",
        MPI_ERR_NOT_SAME => "MPI_ERR_NOT_SAME: collective argument not identical on all processes",
        MPI_ERR_AMODE => "MPI_ERR_AMODE: invalid access mode",
        MPI_ERR_UNSUPPORTED_DATAREP => "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation",
        MPI_ERR_NO_SUCH_FILE => "MPI_ERR_NO_SUCH_FILE: file does not exist",
        MPI_ERR_FILE_EXISTS => "MPI_ERR_FILE_EXISTS: file exists",
        MPI_ERR_BAD_FILE => "MPI_ERR_BAD_FILE: invalid file name",
        MPI_ERR_ACCESS => "MPI_ERR_ACCESS: permission denied",
        MPI_ERR_NO_SPACE => "MPI_ERR_NO_SPACE: not enough space",
        MPI_ERR_QUOTA => "MPI_ERR_QUOTA: quota exceeded",
        MPI_ERR_READ_ONLY => "MPI_ERR_READ_ONLY: read-only file or file system",
        MPI_ERR_FILE_IN_USE => "MPI_ERR_FILE_IN_USE: file in use",
        MPI_ERR_DUP_DATAREP => "MPI_ERR_DUP_DATAREP: data representation already defined",
        MPI_ERR_CONVERSION => "MPI_ERR_CONVERSION: data conversion error",
        MPI_ERR_IO => "MPI_ERR_IO: I/O error",
        _ => return None,
    })
}

fn file_err(code: i32, message: impl Into<String>) -> MpiError {
    mpi_err(code, message)
}

/// A file view: where a rank's data lies in the file (MPI 14.3).
#[derive(Clone)]
pub(crate) struct View {
    pub disp: i64,
    pub etype: i32,
    pub filetype: i32,
    etype_dt: Rc<Datatype>,
    filetype_dt: Rc<Datatype>,
    pub datarep: String,
}

impl View {
    /// Bytes of data per etype.
    fn etype_size(&self) -> u64 {
        (self.etype_dt.size as u64).max(1)
    }

    /// The file byte ranges holding `len` bytes of the view's data starting at data byte `from`
    /// (the data stream is the filetype's blocks, tiled from `disp`, each tile `extent` long).
    fn ranges(&self, from: u64, len: u64) -> Vec<(u64, u64)> {
        let ft = &self.filetype_dt;
        let mut out: Vec<(u64, u64)> = Vec::new();
        if len == 0 {
            return out;
        }
        if ft.is_contiguous() || ft.size == 0 {
            out.push(((self.disp as u64) + from, len));
            return out;
        }
        let tile = ft.size as u64;
        let extent = ft.extent as i64;
        let mut d = from;
        let end = from + len;
        while d < end {
            let instance = d / tile;
            let mut rem = d % tile;
            for &(off, blen) in &ft.blocks {
                let blen = blen as u64;
                if rem >= blen {
                    rem -= blen;
                    continue;
                }
                let take = (blen - rem).min(end - d);
                let at = self.disp + instance as i64 * extent + off as i64 + rem as i64;
                let at = at.max(0) as u64;
                match out.last_mut() {
                    Some(last) if last.0 + last.1 == at => last.1 += take,
                    _ => out.push((at, take)),
                }
                d += take;
                rem = 0;
                if d >= end {
                    break;
                }
            }
        }
        out
    }

    /// The absolute byte offset of etype `offset` of the view.
    fn byte_offset(&self, offset: u64) -> u64 {
        let data = offset * self.etype_size();
        match self.ranges(data, 1).first() {
            Some(&(at, _)) => at,
            None => self.disp.max(0) as u64,
        }
    }
}

/// A mutex some ranks may wait for, granted first come first served (SimGrid's `s4u::Mutex`).
#[derive(Default)]
struct SimMutex {
    owner: Option<u32>,
    waiters: VecDeque<(u32, ActivityId)>,
}

/// SMPI's own view of a file, per rank (its `s4u::File`): what timing is computed from.
#[derive(Clone, Copy)]
struct SgFile {
    pos: u64,
    size: u64,
    /// The disk the file is on, and the host that disk is attached to.
    disk: Option<(DiskId, HostId)>,
}

/// One rank's handle on an open file.
struct Member {
    world: u32,
    /// A private duplicate of the communicator the file was opened on.
    comm: c_int,
    joined: bool,
    closed: bool,
    view: View,
    /// The individual file pointer, in etypes of the view.
    pos: u64,
    sg: SgFile,
    errhandler: i32,
    info: c_int,
    /// A split collective begun and not ended: its call and status.
    split: Option<(&'static str, StatusInfo)>,
    /// Etypes this rank accesses in the ordered call in progress (read by later ranks).
    ordered: u64,
    /// `MPI_File_seek_shared` calls this rank made.
    shared_seeks: u64,
    /// `MPI_File_set_view` calls this rank made.
    view_calls: u64,
}

/// A file opened by the members of a communicator.
struct OpenFile {
    path: String,
    file: Option<std::fs::File>,
    /// How the open went (the first member to arrive opens the file for all).
    open_error: Option<MpiError>,
    amode: i32,
    atomic: bool,
    /// The shared file pointer, in etypes of the view.
    shared: u64,
    /// SMPI's shared pointer (bytes), which times shared-pointer accesses.
    sg_shared: u64,
    mutex: SimMutex,
    /// `MPI_File_seek_shared` calls applied (see [`seek_shared`]).
    shared_seeks: u64,
    /// `MPI_File_set_view` calls applied, and the shared pointer's byte offset at the last one.
    view_calls: u64,
    view_current: i64,
    members: Vec<Member>,
}

impl OpenFile {
    fn rank_of(&self, me: u32) -> MpiResult<usize> {
        self.members
            .iter()
            .position(|m| m.world == me)
            .ok_or_else(|| file_err(MPI_ERR_FILE, "the file was not opened by this rank"))
    }
}

/// Every file opened during the run (handle = index + 1, shared by the members).
pub(crate) struct Files {
    table: Vec<Option<Box<OpenFile>>>,
    /// Files being opened, by the context of their private communicator.
    by_context: HashMap<u32, usize>,
    /// The error handler of `MPI_FILE_NULL`: new files start with it.
    pub default_errhandler: i32,
    /// Hosts already warned about having no disk.
    warned: HashSet<(u32, String)>,
}

impl Default for Files {
    fn default() -> Self {
        Files {
            table: Vec::new(),
            by_context: HashMap::new(),
            default_errhandler: MPI_ERRORS_RETURN,
            warned: HashSet::new(),
        }
    }
}

impl Files {
    fn get(&self, h: c_int) -> MpiResult<&OpenFile> {
        let i = self.index(h)?;
        self.table[i].as_deref().ok_or_else(|| Self::not_open(h))
    }

    fn get_mut(&mut self, h: c_int) -> MpiResult<&mut OpenFile> {
        let i = self.index(h)?;
        self.table[i].as_deref_mut().ok_or_else(|| Self::not_open(h))
    }

    /// The table index of handle `h`, if it is in the table.
    fn index(&self, h: c_int) -> MpiResult<usize> {
        usize::try_from(h - 1)
            .ok()
            .filter(|&i| i < self.table.len())
            .ok_or_else(|| Self::not_open(h))
    }

    fn not_open(h: c_int) -> MpiError {
        file_err(
            MPI_ERR_FILE,
            format!("invalid file handle {h} (not an open file)"),
        )
    }
}

/// Runs `f` on the file and the calling rank's member, checking that the handle is open here.
fn with_file<R>(me: u32, h: c_int, f: impl FnOnce(&mut OpenFile, usize) -> MpiResult<R>) -> MpiResult<R> {
    with_world(|w| {
        let file = w.files.get_mut(h)?;
        let r = file.rank_of(me)?;
        if file.members[r].closed {
            return Err(file_err(
                MPI_ERR_FILE,
                format!("file handle {h} ({}) was closed by MPI_File_close", file.path),
            ));
        }
        f(file, r)
    })
}

/// The error handler to apply to an error on file `h` (`MPI_FILE_NULL`'s when not valid here).
pub(crate) fn errhandler(me: u32, h: c_int) -> i32 {
    with_world(|w| {
        let default = w.files.default_errhandler;
        w.files
            .get(h)
            .ok()
            .and_then(|f| f.rank_of(me).ok().map(|r| &f.members[r]))
            .filter(|m| !m.closed)
            .map_or(default, |m| m.errhandler)
    })
}

pub(crate) fn set_errhandler(me: u32, h: c_int, eh: i32) -> MpiResult<()> {
    if h == 0 {
        with_world(|w| w.files.default_errhandler = eh);
        return Ok(());
    }
    with_file(me, h, |f, r| {
        f.members[r].errhandler = eh;
        Ok(())
    })
}

/// The path of file `h` (for messages).
pub(crate) fn path_of(h: c_int) -> String {
    with_world(|w| w.files.get(h).map(|f| f.path.clone()).unwrap_or_default())
}

fn comm_view(me: u32, h: c_int) -> MpiResult<CommView> {
    let comm = with_file(me, h, |f, r| Ok(f.members[r].comm))?;
    CommView::new(me, comm)
}

fn ctx(me: u32) -> &'static simcore::Ctx {
    with_world(|w| w.ranks[me as usize].ctx())
}

// ------------------------------------------------------------------ SMPI's timing

/// The disk SMPI would put `path` on for a rank on `host` (see the module docs).
fn pick_disk(w: &World, host: HostId, path: &str) -> Option<(DiskId, String)> {
    let p = &w.platform;
    let mut disks: Vec<(DiskId, String)> = p
        .host_disks(host)
        .map(|d| (d, p.disk(d).mount().to_string()))
        .collect();
    for (k, v) in &p.host(host).properties {
        if k != "remote_disk" {
            continue;
        }
        let parts: Vec<&str> = v.split(':').collect();
        if let [mount, disk, remote] = parts[..] {
            if let Some(rh) = p.host_by_name(remote) {
                if let Some(d) = p.host_disks(rh).find(|&d| p.disk(d).name == disk) {
                    disks.push((d, mount.to_string()));
                }
            }
        }
    }
    if disks.is_empty() {
        return None;
    }
    if !path.contains('/') || path.starts_with("./") {
        return disks.into_iter().next();
    }
    disks
        .into_iter()
        .filter(|(_, m)| path.starts_with(m.as_str()))
        .max_by_key(|(_, m)| m.len())
}

/// One disk access of `bytes` bytes by rank `me` on its handle's disk (and the transfer to or
/// from a remote disk's host).
fn disk_io(me: u32, sg: SgFile, bytes: u64, write: bool) {
    let Some((disk, disk_host)) = sg.disk else { return };
    let (ctx, my_host) = with_world(|w| (w.ranks[me as usize].ctx(), w.hosts[me as usize]));
    let transfer = |from: HostId, to: HostId| {
        let a = ctx.comm_async(from, to, bytes as f64, u64::MAX);
        ctx.wait(a);
        ctx.release(a);
    };
    if write && disk_host != my_host {
        transfer(my_host, disk_host);
    }
    let a = ctx.io_async(disk, bytes as f64, write);
    simcall_yield(me);
    ctx.wait(a);
    ctx.release(a);
    if !write && disk_host != my_host && bytes > 0 {
        transfer(disk_host, my_host);
    }
}

fn sg_get(me: u32, h: c_int) -> MpiResult<SgFile> {
    with_file(me, h, |f, r| Ok(f.members[r].sg))
}

fn sg_set_pos(me: u32, h: c_int, pos: u64) {
    let _ = with_file(me, h, |f, r| {
        let sg = &mut f.members[r].sg;
        sg.pos = pos;
        sg.size = sg.size.max(pos);
        Ok(())
    });
}

/// SMPI's `s4u::File::read`: up to the size the handle knows; nothing on an empty file.
fn sg_file_read(me: u32, h: c_int, size: u64) -> MpiResult<()> {
    let sg = sg_get(me, h)?;
    if sg.size == 0 {
        return Ok(());
    }
    // Unsigned as in SimGrid: past the end, the whole size is read.
    let to_read = size.min(sg.size.wrapping_sub(sg.pos));
    disk_io(me, sg, to_read, false);
    let _ = with_file(me, h, |f, r| {
        f.members[r].sg.pos += to_read;
        Ok(())
    });
    Ok(())
}

/// SMPI's `s4u::File::write`.
fn sg_file_write(me: u32, h: c_int, size: u64) -> MpiResult<()> {
    if size == 0 {
        return Ok(());
    }
    let sg = sg_get(me, h)?;
    disk_io(me, sg, size, true);
    sg_set_pos(me, h, sg.pos + size);
    Ok(())
}

/// SMPI's `File::read` / `File::write` of `count` elements of a type of `size` bytes and
/// `extent` bytes of extent.
fn sg_access(me: u32, h: c_int, count: u64, size: u64, extent: i64, write: bool) -> MpiResult<()> {
    let position = sg_get(me, h)?.pos;
    let movesize = (extent * count as i64).max(0) as u64;
    let datasize = size * count;
    if write {
        sg_file_write(me, h, datasize)?;
    } else {
        sg_file_read(me, h, datasize)?;
    }
    if datasize != movesize {
        sg_set_pos(me, h, position + movesize);
    }
    Ok(())
}

/// SMPI's `File::seek` (bytes).
fn sg_seek(me: u32, h: c_int, offset: i64, whence: i32) {
    let _ = with_file(me, h, |f, r| {
        let sg = &mut f.members[r].sg;
        let base = match whence {
            MPI_SEEK_CUR => sg.pos as i64,
            MPI_SEEK_END => sg.size as i64,
            _ => 0,
        };
        sg.pos = (base + offset).max(0) as u64;
        sg.size = sg.size.max(sg.pos);
        Ok(())
    });
}

fn lock(me: u32, h: c_int) -> MpiResult<()> {
    let wait = with_world(|w| -> MpiResult<Option<ActivityId>> {
        let ctx = w.ranks[me as usize].ctx();
        let f = w.files.get_mut(h)?;
        if f.mutex.owner.is_none() {
            f.mutex.owner = Some(me);
            Ok(None)
        } else {
            let a = ctx.manual_create();
            f.mutex.waiters.push_back((me, a));
            Ok(Some(a))
        }
    })?;
    match wait {
        None => simcall_yield(me),
        Some(a) => {
            let c = ctx(me);
            c.wait(a);
            c.release(a);
        }
    }
    Ok(())
}

fn unlock(me: u32, h: c_int) {
    let next = with_world(|w| {
        let f = w.files.get_mut(h).ok()?;
        match f.mutex.waiters.pop_front() {
            Some((who, a)) => {
                f.mutex.owner = Some(who);
                Some(a)
            }
            None => {
                f.mutex.owner = None;
                None
            }
        }
    });
    if let Some(a) = next {
        ctx(me).complete(a);
    }
    simcall_yield(me);
}

// ------------------------------------------------------------------ real data

/// The calling rank's view, amode and file.
fn access_state(me: u32, h: c_int) -> MpiResult<(View, i32, std::fs::File)> {
    with_file(me, h, |f, r| {
        let file = f
            .file
            .as_ref()
            .ok_or_else(|| file_err(MPI_ERR_FILE, "the file is not open"))?
            .try_clone()
            .map_err(|e| file_err(MPI_ERR_IO, format!("{}: {e}", f.path)))?;
        Ok((f.members[r].view.clone(), f.amode, file))
    })
}

fn io_error(path: &str, e: &std::io::Error) -> MpiError {
    let code = match e.raw_os_error() {
        Some(libc::ENOSPC) => MPI_ERR_NO_SPACE,
        Some(libc::EDQUOT) => MPI_ERR_QUOTA,
        Some(libc::EROFS) => MPI_ERR_READ_ONLY,
        Some(libc::EACCES) | Some(libc::EPERM) => MPI_ERR_ACCESS,
        _ => MPI_ERR_IO,
    };
    file_err(code, format!("{path}: {e}"))
}

/// What an access moves: the user's buffer as `count` elements of `dt`.
pub(crate) struct Data {
    pub buf: *mut u8,
    pub count: usize,
    pub dtype: i32,
}

fn data_type(d: &Data) -> MpiResult<Rc<Datatype>> {
    with_world(|w| w.dtype(d.dtype))
}

/// Writes the data at etype `at` of the view; returns the bytes written.
fn write_data(me: u32, h: c_int, d: &Data, at: u64) -> MpiResult<u64> {
    let (view, _, file) = access_state(me, h)?;
    let dt = data_type(d)?;
    let mut bytes = Vec::with_capacity(dt.size * d.count);
    // Safety: the program's buffer holds `count` elements of the type (checked by the caller).
    unsafe { dt.pack(d.buf, d.count, &mut bytes) };
    let path = path_of(h);
    let mut done = 0u64;
    for (off, len) in view.ranges(at * view.etype_size(), bytes.len() as u64) {
        let chunk = &bytes[done as usize..(done + len) as usize];
        file.write_all_at(chunk, off).map_err(|e| io_error(&path, &e))?;
        done += len;
    }
    Ok(done)
}

/// Reads the data at etype `at` of the view, up to the end of the file; returns the bytes read.
fn read_data(me: u32, h: c_int, d: &Data, at: u64) -> MpiResult<u64> {
    let (view, _, file) = access_state(me, h)?;
    let dt = data_type(d)?;
    let want = (dt.size * d.count) as u64;
    let mut bytes = vec![0u8; want as usize];
    let path = path_of(h);
    let mut done = 0u64;
    'ranges: for (off, len) in view.ranges(at * view.etype_size(), want) {
        let mut got = 0u64;
        while got < len {
            let dst = &mut bytes[(done + got) as usize..(done + len) as usize];
            match file.read_at(dst, off + got) {
                Ok(0) => {
                    done += got;
                    break 'ranges;
                }
                Ok(n) => got += n as u64,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_error(&path, &e)),
            }
        }
        done += len;
    }
    bytes.truncate(done as usize);
    // Safety: the program's buffer holds `count` elements of the type (checked by the caller).
    unsafe { dt.unpack(&bytes, d.buf, d.count) };
    Ok(done)
}

// ------------------------------------------------------------------ open, close, delete

/// Checks an access mode as MPI 14.2.1 says.
fn check_amode(amode: i32) -> MpiResult<()> {
    let access = [MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR]
        .iter()
        .filter(|&&m| amode & m != 0)
        .count();
    let bad = if amode & !ALL_MODES != 0 {
        Some("unknown bits")
    } else if access != 1 {
        Some("exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and MPI_MODE_RDWR is required")
    } else if amode & MPI_MODE_RDONLY != 0 && amode & (MPI_MODE_CREATE | MPI_MODE_EXCL) != 0 {
        Some("MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL")
    } else if amode & MPI_MODE_RDWR != 0 && amode & MPI_MODE_SEQUENTIAL != 0 {
        Some("MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL")
    } else {
        None
    };
    match bad {
        Some(why) => Err(file_err(
            MPI_ERR_AMODE,
            format!("invalid amode {amode:#x}: {why}"),
        )),
        None => Ok(()),
    }
}

fn open_real(path: &str, amode: i32) -> MpiResult<std::fs::File> {
    if path.is_empty() {
        return Err(file_err(MPI_ERR_BAD_FILE, "empty file name"));
    }
    let mut o = std::fs::OpenOptions::new();
    o.read(amode & MPI_MODE_WRONLY == 0);
    o.write(amode & MPI_MODE_RDONLY == 0);
    if amode & MPI_MODE_CREATE != 0 {
        if amode & MPI_MODE_EXCL != 0 {
            o.create_new(true);
        } else {
            o.create(true);
        }
    }
    o.open(path).map_err(|e| {
        let code = match e.kind() {
            std::io::ErrorKind::NotFound => MPI_ERR_NO_SUCH_FILE,
            std::io::ErrorKind::AlreadyExists => MPI_ERR_FILE_EXISTS,
            std::io::ErrorKind::PermissionDenied => MPI_ERR_ACCESS,
            _ => match e.raw_os_error() {
                Some(libc::EISDIR) | Some(libc::ENOTDIR) | Some(libc::ENAMETOOLONG) => MPI_ERR_BAD_FILE,
                Some(libc::EROFS) => MPI_ERR_READ_ONLY,
                Some(libc::ENOSPC) => MPI_ERR_NO_SPACE,
                _ => MPI_ERR_IO,
            },
        };
        file_err(code, format!("cannot open `{path}`: {e}"))
    })
}

fn default_view(w: &World) -> MpiResult<View> {
    let byte = w.dtype(MPI_BYTE)?;
    Ok(View {
        disp: 0,
        etype: MPI_BYTE,
        filetype: MPI_BYTE,
        etype_dt: byte.clone(),
        filetype_dt: byte,
        datarep: "native".to_string(),
    })
}

/// `MPI_File_open`: collective over `comm`; returns the handle.
pub(crate) fn open(me: u32, comm: c_int, path: &str, amode: i32, info: c_int) -> MpiResult<c_int> {
    check_amode(amode)?;
    let inter = with_world(|w| w.ranks[me as usize].comm(comm).map(|c| c.shared.remote.is_some()))?;
    if inter {
        return Err(mpi_err(MPI_ERR_COMM, "MPI_File_open needs an intra-communicator"));
    }
    let private = crate::mpi::comm::new_comm_entry(me, comm, i32::MIN + 2, None)?;
    let handle = with_world(|w| -> MpiResult<c_int> {
        let c = w.ranks[me as usize].comm(private)?;
        let (context, group, my) = (c.shared.context, c.shared.group.clone(), c.my_rank as usize);
        let idx = match w.files.by_context.get(&context) {
            Some(&i) => i,
            None => {
                // The first member to arrive opens the file for all.
                let (file, open_error) = match open_real(path, amode) {
                    Ok(f) => (Some(f), None),
                    Err(e) => (None, Some(e)),
                };
                let view = default_view(w)?;
                let default_eh = w.files.default_errhandler;
                let members = group
                    .iter()
                    .map(|&world| Member {
                        world,
                        comm: 0,
                        joined: false,
                        closed: true,
                        view: view.clone(),
                        pos: 0,
                        sg: SgFile {
                            pos: 0,
                            size: 0,
                            disk: None,
                        },
                        errhandler: default_eh,
                        info: 0,
                        split: None,
                        ordered: 0,
                        shared_seeks: 0,
                        view_calls: 0,
                    })
                    .collect();
                w.files.table.push(Some(Box::new(OpenFile {
                    path: path.to_string(),
                    file,
                    open_error,
                    amode,
                    atomic: false,
                    shared: 0,
                    sg_shared: 0,
                    mutex: SimMutex::default(),
                    shared_seeks: 0,
                    view_calls: 0,
                    view_current: 0,
                    members,
                })));
                let i = w.files.table.len() - 1;
                w.files.by_context.insert(context, i);
                i
            }
        };
        let host = w.hosts[me as usize];
        let disk = pick_disk(w, host, path);
        let info_copy = w.infos.create();
        if info > 0 {
            copy_info(&mut w.infos, info, info_copy)?;
        }
        let f = w.files.table[idx].as_mut().expect("file being opened");
        let real_size = f
            .file
            .as_ref()
            .and_then(|x| x.metadata().ok())
            .map_or(0, |m| m.len());
        let m = &mut f.members[my];
        m.comm = private;
        m.joined = true;
        m.closed = false;
        m.info = info_copy;
        m.sg = SgFile {
            pos: 0,
            size: real_size,
            disk: disk.as_ref().map(|(d, _)| (*d, w.platform.disk(*d).host)),
        };
        let all_joined = f.members.iter().all(|m| m.joined);
        let error = f.open_error.clone();
        if all_joined {
            w.files.by_context.remove(&context);
        }
        if let Some(e) = error {
            let m = &mut f.members[my];
            m.closed = true;
            let info = m.info;
            let all_failed = f.members.iter().all(|m| m.joined && m.closed);
            if all_failed {
                w.files.table[idx] = None;
            }
            let _ = w.infos.free(info);
            w.ranks[me as usize].comms[private as usize] = None;
            return Err(e);
        }
        if disk.is_none() {
            let host_name = w.platform.host(host).name.clone();
            let has_disks = w.platform.host_disks(host).next().is_some();
            // Once per run for hosts without disks, once per host and path otherwise.
            let key = if has_disks {
                format!("{host_name}\u{0}{path}")
            } else {
                String::new()
            };
            let first = w.files.warned.insert((u32::MAX, key));
            if first {
                if has_disks {
                    eprintln!(
                        "smpirun: warning: no disk of host `{host_name}` is mounted on a prefix of `{path}`: \
                         its MPI-IO on that file takes no simulated time (SMPI would stop)"
                    );
                } else {
                    eprintln!(
                        "smpirun: warning: host `{host_name}` has no disk: MPI-IO of the ranks on hosts \
                         without disks takes no simulated time (SMPI would stop; add a <disk> to the \
                         host in the platform)"
                    );
                }
            }
        }
        Ok(idx as c_int + 1)
    })?;
    // SMPI: opening the file is a simcall, then the shared pointer's window (an allgather of
    // 8 bytes) and two broadcasts of 8 bytes from rank 0.
    simcall_yield(me);
    let view = CommView::new(me, private)?;
    let n = view.size as usize;
    let mine = [0u8; 8];
    let mut all = vec![0u8; 8 * n];
    coll::allgather8(view, &mine, &mut all)?;
    let mut word = [0u8; 8];
    coll::bcast(view, word.as_mut_ptr(), 8, MPI_BYTE, 0)?;
    coll::bcast(view, word.as_mut_ptr(), 8, MPI_BYTE, 0)?;
    if amode & MPI_MODE_APPEND != 0 {
        // MPI: every pointer starts at the end; SMPI: its byte position.
        sg_seek(me, handle, 0, MPI_SEEK_END);
        with_file(me, handle, |f, r| {
            let size = f
                .file
                .as_ref()
                .and_then(|x| x.metadata().ok())
                .map_or(0, |m| m.len());
            f.members[r].pos = size;
            f.shared = size;
            Ok(())
        })?;
    }
    Ok(handle)
}

fn copy_info(infos: &mut crate::mpi::info::InfoTable, from: c_int, to: c_int) -> MpiResult<()> {
    let n = infos.nkeys(from)?;
    for i in 0..n {
        let key = infos.nth_key(from, i as i32)?;
        if let Some(v) = infos.get(from, &key)? {
            infos.set(to, &key, &v)?;
        }
    }
    Ok(())
}

/// `MPI_File_close`: collective.
pub(crate) fn close(me: u32, h: c_int) -> MpiResult<()> {
    let view = comm_view(me, h)?;
    if let Some((call, _)) = with_file(me, h, |f, r| Ok(f.members[r].split))? {
        return Err(file_err(
            MPI_ERR_FILE,
            format!("file closed while its split collective {call} is not ended"),
        ));
    }
    // SMPI: sync (a barrier), then the window's free (two barriers), then a simcall.
    coll::barrier(view)?;
    coll::barrier(view)?;
    coll::barrier(view)?;
    simcall_yield(me);
    with_world(|w| -> MpiResult<()> {
        let f = w.files.get_mut(h)?;
        let r = f.rank_of(me)?;
        let m = &mut f.members[r];
        m.closed = true;
        let (info, comm) = (m.info, m.comm);
        let all_closed = f.members.iter().all(|m| m.closed);
        if all_closed {
            if f.amode & MPI_MODE_DELETE_ON_CLOSE != 0 {
                let _ = std::fs::remove_file(&f.path);
            }
            w.files.table[h as usize - 1] = None;
        }
        if info > 0 {
            let _ = w.infos.free(info);
        }
        w.ranks[me as usize].comms[comm as usize] = None;
        Ok(())
    })
}

/// `MPI_File_delete`.
pub(crate) fn delete(me: u32, path: &str) -> MpiResult<()> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(file_err(
                MPI_ERR_NO_SUCH_FILE,
                format!("cannot delete `{path}`: no such file"),
            ))
        }
        Err(e) => return Err(io_error(path, &e)),
        Ok(m) if m.is_dir() => {
            return Err(file_err(
                MPI_ERR_BAD_FILE,
                format!("cannot delete `{path}`: a directory"),
            ))
        }
        Ok(_) => {}
    }
    // SMPI opens the file on MPI_COMM_SELF with MPI_MODE_DELETE_ON_CLOSE and closes it.
    let h = open(
        me,
        MPI_COMM_SELF,
        path,
        MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
        0,
    )?;
    close(me, h)
}

// ------------------------------------------------------------------ accesses

fn check_access(me: u32, h: c_int, write: bool, call: &str) -> MpiResult<()> {
    let amode = with_file(me, h, |f, _| Ok(f.amode))?;
    if write && amode & MPI_MODE_RDONLY != 0 {
        return Err(file_err(
            MPI_ERR_READ_ONLY,
            format!("{call} on `{}`, opened MPI_MODE_RDONLY", path_of(h)),
        ));
    }
    if !write && amode & MPI_MODE_WRONLY != 0 {
        return Err(file_err(
            MPI_ERR_ACCESS,
            format!("{call} on `{}`, opened MPI_MODE_WRONLY", path_of(h)),
        ));
    }
    Ok(())
}

fn bytes_to_etypes(me: u32, h: c_int, bytes: u64) -> MpiResult<u64> {
    with_file(me, h, |f, r| Ok(bytes / f.members[r].view.etype_size()))
}

fn status(bytes: u64) -> StatusInfo {
    StatusInfo {
        source: MPI_ANY_SOURCE,
        tag: MPI_ANY_TAG,
        error: MPI_SUCCESS,
        bytes: bytes as usize,
        cancelled: false,
    }
}

/// An access function's form: where in the file it reads or writes, and whether the ranks make
/// it together (MPI 14.4.1; the suffixes of the functions' names).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Access {
    /// `_at`: at an explicit offset (etypes).
    At(i64),
    /// `_at_all`: collective, each rank at its explicit offset (etypes).
    AtAll(i64),
    /// No suffix: at the individual pointer.
    Individual,
    /// `_all`: collective, each rank at its individual pointer.
    All,
    /// `_shared`: at the shared pointer, one rank at a time.
    Shared,
    /// `_ordered`: collective, in rank order from the shared pointer.
    Ordered,
}

/// An access of `d` in form `how`, a write if `write`: the operation of every access function
/// (the non-blocking and split collective ones make it at once too).
pub(crate) fn access(
    me: u32,
    h: c_int,
    d: &Data,
    how: Access,
    write: bool,
    call: &str,
) -> MpiResult<StatusInfo> {
    check_access(me, h, write, call)?;
    if let Access::At(o) | Access::AtAll(o) = how {
        if o < 0 {
            return Err(file_err(MPI_ERR_ARG, format!("{call}: negative offset {o}")));
        }
    }
    let dt = data_type(d)?;
    let (count, size, extent) = (d.count as u64, dt.size as u64, dt.extent as i64);
    let contiguous = dt.is_contiguous();
    // SMPI's timing, from its byte position: one rank's access, or the ranks' together.
    let independent = || sg_access(me, h, count, size, extent, write);
    let collective = || sg_op_all(me, h, count, size, extent, contiguous, write);
    let op = Op { me, h, d, write };
    let n = match how {
        Access::At(_) | Access::Individual | Access::Shared if count == 0 => 0,
        Access::At(o) => at_or_pointer(op, Some(o), independent)?,
        Access::Individual => at_or_pointer(op, None, independent)?,
        Access::AtAll(o) => at_or_pointer(op, Some(o), collective)?,
        Access::All => at_or_pointer(op, None, collective)?,
        Access::Shared => shared(op, independent)?,
        Access::Ordered => ordered(op, size * count, collective)?,
    };
    Ok(status(n))
}

/// An access in progress: the calling rank, the file, the data, and whether it is a write.
#[derive(Clone, Copy)]
struct Op<'a> {
    me: u32,
    h: c_int,
    d: &'a Data,
    write: bool,
}

/// Moves the data of an access at etype `at` of the view around `time`, the access's timing: a
/// write's data goes to the file when the call starts, a read's is taken when it ends (see the
/// module docs). Returns the bytes moved.
fn transfer(op: Op, at: u64, time: impl FnOnce() -> MpiResult<()>) -> MpiResult<u64> {
    let Op { me, h, d, write } = op;
    if d.count == 0 {
        time()?;
        return Ok(0);
    }
    if write {
        let n = write_data(me, h, d, at)?;
        time()?;
        Ok(n)
    } else {
        time()?;
        read_data(me, h, d, at)
    }
}

/// SMPI's position in etypes of the view (its byte position over the etype's extent), which it
/// restores after an access elsewhere, as a number of bytes (its mix-up, reproduced).
fn sg_etype_position(me: u32, h: c_int) -> MpiResult<u64> {
    with_file(me, h, |f, r| {
        let m = &f.members[r];
        Ok(m.sg.pos / m.view.etype_dt.extent.max(1) as u64)
    })
}

/// An access at explicit offset `offset` (etypes) or, without one, at the individual pointer,
/// which then moves past the data. SMPI times an access at an offset by remembering its
/// position, seeking to the offset (as bytes), accessing (`time`), and seeking back.
fn at_or_pointer(op: Op, offset: Option<i64>, time: impl FnOnce() -> MpiResult<()>) -> MpiResult<u64> {
    let (me, h) = (op.me, op.h);
    let Some(offset) = offset else {
        let at = with_file(me, h, |f, r| Ok(f.members[r].pos))?;
        let n = transfer(op, at, time)?;
        let moved = bytes_to_etypes(me, h, n)?;
        with_file(me, h, |f, r| {
            f.members[r].pos = at + moved;
            Ok(())
        })?;
        return Ok(n);
    };
    transfer(op, offset as u64, || {
        let prev = sg_etype_position(me, h)?;
        sg_seek(me, h, offset, MPI_SEEK_SET);
        time()?;
        sg_seek(me, h, prev as i64, MPI_SEEK_SET);
        Ok(())
    })
}

/// SMPI's shared pointer takes the rank's byte position (under the file's mutex).
fn sg_store_shared(me: u32, h: c_int) -> MpiResult<()> {
    let pos = sg_get(me, h)?.pos;
    with_file(me, h, |f, _| {
        f.sg_shared = pos;
        Ok(())
    })
}

/// The rank's byte position goes to SMPI's shared pointer.
fn sg_load_shared(me: u32, h: c_int) -> MpiResult<()> {
    let pos = with_file(me, h, |f, _| Ok(f.sg_shared))?;
    sg_seek(me, h, pos as i64, MPI_SEEK_SET);
    Ok(())
}

/// A `_shared` access: under the file's mutex, the data at the shared pointer, which moves past
/// it; timed (`time`) from SMPI's shared pointer, which moves as the rank's position does.
fn shared(op: Op, time: impl FnOnce() -> MpiResult<()>) -> MpiResult<u64> {
    let Op { me, h, d, write } = op;
    lock(me, h)?;
    let r = (|| -> MpiResult<u64> {
        let at = with_file(me, h, |f, _| Ok(f.shared))?;
        let n = if write {
            write_data(me, h, d, at)?
        } else {
            read_data(me, h, d, at)?
        };
        let moved = bytes_to_etypes(me, h, n)?;
        with_file(me, h, |f, _| {
            f.shared = at + moved;
            Ok(())
        })?;
        sg_load_shared(me, h)?;
        time()?;
        sg_store_shared(me, h)?;
        Ok(n)
    })();
    // SMPI: a write takes the shared pointer's position before unlocking, a read after.
    if write {
        sg_load_shared(me, h)?;
        unlock(me, h);
    } else {
        unlock(me, h);
        sg_load_shared(me, h)?;
    }
    r
}

/// An `_ordered` access of `bytes` bytes: collective, in rank order from the shared pointer;
/// `time` is the collective timing, made from the place SMPI's scan gives.
fn ordered(op: Op, bytes: u64, time: impl FnOnce() -> MpiResult<()>) -> MpiResult<u64> {
    let (me, h) = (op.me, op.h);
    let view = comm_view(me, h)?;
    let etypes = with_file(me, h, |f, r| {
        let m = &mut f.members[r];
        m.ordered = bytes / m.view.etype_size();
        Ok(m.ordered)
    })?;
    // SMPI's scan: rank 0 gives its shared pointer (bytes), the others their data size.
    let val: i64 = if view.rank == 0 {
        with_file(me, h, |f, _| Ok(f.sg_shared as i64))?
    } else {
        bytes as i64
    };
    let mut result = 0i64;
    coll::scan(
        view,
        (&val as *const i64).cast(),
        (&mut result as *mut i64).cast(),
        1,
        MPI_OFFSET,
        MPI_SUM,
        false,
    )?;
    // MPI's place: the shared pointer plus the earlier ranks' etypes (all of them have entered
    // the call once the scan, a chain, has reached this rank).
    let start = with_file(me, h, |f, r| {
        Ok(f.shared + f.members[..r].iter().map(|m| m.ordered).sum::<u64>())
    })?;
    let prev = sg_etype_position(me, h)?;
    let n = transfer(op, start, || {
        sg_seek(me, h, result, MPI_SEEK_SET);
        time()
    })?;
    if view.rank == view.size - 1 {
        lock(me, h)?;
        sg_store_shared(me, h)?;
        with_file(me, h, |f, _| {
            f.shared = start + etypes;
            Ok(())
        })?;
        unlock(me, h);
    }
    let mut c = [0u8; 1];
    coll::bcast(view, c.as_mut_ptr(), 1, MPI_BYTE, view.size - 1)?;
    sg_seek(me, h, prev as i64, MPI_SEEK_SET);
    Ok(n)
}

/// SMPI's `File::op_all`: each rank's byte range gathered; either every rank accesses its own
/// part, or the two-phase scheme (see the module docs). Only times: the data is moved by the
/// caller.
fn sg_op_all(
    me: u32,
    h: c_int,
    count: u64,
    size: u64,
    extent: i64,
    contiguous: bool,
    write: bool,
) -> MpiResult<()> {
    let view = comm_view(me, h)?;
    let (n, rank) = (view.size as usize, view.rank as usize);
    let mut min_offset = sg_get(me, h)?.pos as i64;
    let max_offset = min_offset + count as i64 * extent;
    let mut mins = vec![0u8; 8 * n];
    let mut maxs = vec![0u8; 8 * n];
    coll::allgather8(view, &min_offset.to_le_bytes(), &mut mins)?;
    coll::allgather8(view, &max_offset.to_le_bytes(), &mut maxs)?;
    let word = |v: &[u8], i: usize| i64::from_le_bytes(v[8 * i..8 * i + 8].try_into().expect("8 bytes"));
    let min_offsets: Vec<i64> = (0..n).map(|i| word(&mins, i)).collect();
    let max_offsets: Vec<i64> = (0..n).map(|i| word(&maxs, i)).collect();
    let (mut min, mut max, mut tot, mut empty) = (min_offset, max_offset, 0i64, true);
    for i in 0..n {
        if min_offsets[i] != max_offsets[i] {
            empty = false;
        }
        tot += max_offsets[i] - min_offsets[i];
        min = min.min(min_offsets[i]);
        max = max.max(max_offsets[i]);
    }
    if empty {
        return Ok(());
    }
    if n == 1 || (max - min == tot && contiguous) {
        sg_access(me, h, count, size, extent, write)?;
        sg_seek(me, h, max_offset, MPI_SEEK_SET);
        return Ok(());
    }
    let chunk = (max - min + 1) / n as i64;
    let my_start = min + chunk * rank as i64;
    let my_end = min + chunk * (rank as i64 + 1) + 1;
    let mut send_sizes = vec![0usize; n];
    for i in 0..n {
        if (my_start >= min_offsets[i] && my_start < max_offsets[i])
            || (my_end <= max_offsets[i] && my_end > min_offsets[i])
        {
            let s = max_offsets[i].min(my_end) - min_offsets[i].max(my_start);
            // SMPI sends only the data, as if packed (C integer arithmetic).
            let s = (s / extent) * size as i64;
            send_sizes[i] = s.max(0) as usize;
            min_offset = min_offset.min(min_offsets[i]);
        }
    }
    min_offset = min_offset.max(my_start);
    let mut ranges: Vec<(i64, i64)> = (0..n).map(|i| (min_offsets[i], max_offsets[i])).collect();
    ranges.sort();
    let mut chunks = vec![ranges[0]];
    for &(s, e) in &ranges[1..] {
        let last = chunks.last_mut().expect("one chunk at least");
        if e > last.1 {
            if s > last.1 {
                chunks.push((s, e));
            } else {
                last.1 = e;
            }
        }
    }
    let mut totreads = 0i64;
    for &(s, e) in &chunks {
        if e < my_start || s > my_end {
            continue;
        }
        totreads += e.min(my_end) - s.max(my_start);
    }
    if totreads > 0 {
        sg_seek(me, h, min_offset, MPI_SEEK_SET);
        sg_access(me, h, (totreads / extent).max(0) as u64, size, extent, write)?;
        sg_seek(me, h, max_offset, MPI_SEEK_SET);
    }
    let int_size = 4usize;
    let sizes_out: Vec<u8> = send_sizes
        .iter()
        .flat_map(|&s| (s as i32).to_le_bytes())
        .collect();
    let mut sizes_in = vec![0u8; int_size * n];
    let ones = vec![int_size; n];
    let displs: Vec<isize> = (0..n as isize).map(|i| i * int_size as isize).collect();
    coll::alltoallv(
        view,
        sizes_out.as_ptr(),
        &ones,
        &displs,
        MPI_BYTE,
        sizes_in.as_mut_ptr(),
        &ones,
        &displs,
        MPI_BYTE,
        true,
    )?;
    let recv_sizes: Vec<usize> = (0..n)
        .map(|i| i32::from_le_bytes(sizes_in[4 * i..4 * i + 4].try_into().expect("4 bytes")).max(0) as usize)
        .collect();
    let mut recv_disps = vec![0isize; n];
    let mut total = 0usize;
    for i in 0..n {
        recv_disps[i] = total as isize;
        total += recv_sizes[i];
    }
    // SMPI sends every part from the start of one buffer; the data is scratch (the real data
    // was moved by the caller).
    let sendbuf = vec![0u8; send_sizes.iter().copied().max().unwrap_or(0).max(1)];
    let mut recvbuf = vec![0u8; total.max(1)];
    let zeros = vec![0isize; n];
    coll::alltoallv(
        view,
        sendbuf.as_ptr(),
        &send_sizes,
        &zeros,
        MPI_BYTE,
        recvbuf.as_mut_ptr(),
        &recv_sizes,
        &recv_disps,
        MPI_BYTE,
        false,
    )?;
    Ok(())
}

/// `_begin` of a split collective: the whole operation now; `_end` returns its status.
pub(crate) fn split_begin(me: u32, h: c_int, call: &'static str, st: MpiResult<StatusInfo>) -> MpiResult<()> {
    let st = st?;
    with_file(me, h, |f, r| {
        let m = &mut f.members[r];
        if let Some((other, _)) = m.split {
            return Err(file_err(
                MPI_ERR_OTHER,
                format!("{call} while the split collective {other} is not ended"),
            ));
        }
        m.split = Some((call, st));
        Ok(())
    })
}

/// `_end` of a split collective begun by `begin`.
pub(crate) fn split_end(me: u32, h: c_int, begin: &str, call: &str) -> MpiResult<StatusInfo> {
    with_file(me, h, |f, r| {
        let m = &mut f.members[r];
        match m.split {
            Some((b, st)) if b == begin => {
                m.split = None;
                Ok(st)
            }
            Some((b, _)) => Err(file_err(
                MPI_ERR_OTHER,
                format!("{call} does not end the split collective in progress ({b})"),
            )),
            None => Err(file_err(MPI_ERR_OTHER, format!("{call} without {begin}"))),
        }
    })
}

/// A request already complete, carrying `st` (the non-blocking forms).
pub(crate) fn done_request(me: u32, st: StatusInfo) -> u32 {
    with_world(|w| {
        let ctx = w.ranks[me as usize].ctx();
        let act = ctx.manual_create();
        ctx.complete(act);
        let mut r = Request::local(ReqKind::Generalized, me, MPI_COMM_SELF, Some(act));
        r.done = true;
        r.status = st;
        w.alloc_req(r)
    })
}

// ------------------------------------------------------------------ pointers, views, sizes

pub(crate) fn seek(me: u32, h: c_int, offset: i64, whence: i32) -> MpiResult<()> {
    let (pos, etype_extent, view) = with_file(me, h, |f, r| {
        let m = &f.members[r];
        if f.amode & MPI_MODE_SEQUENTIAL != 0 {
            return Err(file_err(23, "MPI_File_seek on a file opened MPI_MODE_SEQUENTIAL"));
        }
        Ok((m.pos, m.view.etype_dt.extent, m.view.clone()))
    })?;
    let new = seek_target(me, h, &view, pos, offset, whence, "pointer")?;
    sg_seek(me, h, offset * etype_extent.max(1) as i64, whence);
    with_file(me, h, |f, r| {
        f.members[r].pos = new;
        Ok(())
    })
}

/// Where a seek of `offset` etypes from `whence` places a pointer of the view now at etype
/// `cur`; `pointer` names it in the error.
fn seek_target(
    me: u32,
    h: c_int,
    view: &View,
    cur: u64,
    offset: i64,
    whence: i32,
    pointer: &str,
) -> MpiResult<u64> {
    let end = end_in_etypes(me, h, view)?;
    let new = match whence {
        MPI_SEEK_SET => offset,
        MPI_SEEK_CUR => cur as i64 + offset,
        MPI_SEEK_END => end as i64 + offset,
        _ => return Err(mpi_err(MPI_ERR_ARG, format!("invalid whence {whence}"))),
    };
    if new < 0 {
        return Err(mpi_err(
            MPI_ERR_ARG,
            format!("the seek would place the {pointer} before the start of the view ({new})"),
        ));
    }
    Ok(new as u64)
}

/// The etype offset just past the end of the file in the view (MPI's `MPI_SEEK_END`).
fn end_in_etypes(me: u32, h: c_int, view: &View) -> MpiResult<u64> {
    let size = get_size(me, h)? as u64;
    let ft = &view.filetype_dt;
    let esize = view.etype_size();
    let disp = view.disp.max(0) as u64;
    if size <= disp {
        return Ok(0);
    }
    let past = size - disp;
    if ft.is_contiguous() || ft.size == 0 {
        return Ok(past.div_ceil(esize));
    }
    // Whole tiles, then the data bytes of the last partial tile below the end.
    let extent = (ft.extent.max(1)) as u64;
    let tiles = past / extent;
    let rest = past % extent;
    let mut data = tiles * ft.size as u64;
    for &(off, len) in &ft.blocks {
        let off = off.max(0) as u64;
        if off < rest {
            data += (len as u64).min(rest - off);
        }
    }
    Ok(data.div_ceil(esize))
}

pub(crate) fn seek_shared(me: u32, h: c_int, offset: i64, whence: i32) -> MpiResult<()> {
    let (view, cur) = with_file(me, h, |f, r| Ok((f.members[r].view.clone(), f.shared)))?;
    let new = seek_target(me, h, &view, cur, offset, whence, "shared pointer")?;
    // SMPI: under the mutex, seek this rank's position and make it the shared pointer.
    lock(me, h)?;
    sg_seek(me, h, offset * view.etype_dt.extent.max(1) as i64, whence);
    sg_store_shared(me, h)?;
    with_file(me, h, |f, r| {
        // Collective without a barrier (as SMPI): the first rank to make its k-th call sets the
        // pointer, so that a rank arriving late does not undo accesses made since.
        let m = &mut f.members[r];
        m.shared_seeks += 1;
        if m.shared_seeks > f.shared_seeks {
            f.shared_seeks = m.shared_seeks;
            f.shared = new;
        }
        Ok(())
    })?;
    unlock(me, h);
    Ok(())
}

pub(crate) fn position(me: u32, h: c_int) -> MpiResult<i64> {
    with_file(me, h, |f, r| Ok(f.members[r].pos as i64))
}

pub(crate) fn position_shared(me: u32, h: c_int) -> MpiResult<i64> {
    with_file(me, h, |f, _| Ok(f.shared as i64))
}

pub(crate) fn byte_offset(me: u32, h: c_int, offset: i64) -> MpiResult<i64> {
    if offset < 0 {
        return Err(mpi_err(MPI_ERR_ARG, format!("negative offset {offset}")));
    }
    with_file(me, h, |f, r| {
        Ok(f.members[r].view.byte_offset(offset as u64) as i64)
    })
}

pub(crate) fn set_view(
    me: u32,
    h: c_int,
    disp: i64,
    etype: i32,
    filetype: i32,
    datarep: &str,
    info: c_int,
) -> MpiResult<()> {
    let (et, ft) =
        with_world(|w| -> MpiResult<_> { Ok((w.dtype(etype)?, w.dtype(filetype)?)) }).map_err(|_| {
            mpi_err(
                MPI_ERR_TYPE,
                format!("invalid etype {etype} or filetype {filetype}"),
            )
        })?;
    for (t, name) in [(&et, "etype"), (&ft, "filetype")] {
        if !t.predefined && !t.committed {
            return Err(mpi_err(
                MPI_ERR_TYPE,
                format!("{name} {} is not committed", t.name),
            ));
        }
    }
    if et.size > 0 && ft.size % et.size != 0 {
        return Err(mpi_err(
            MPI_ERR_TYPE,
            format!(
                "the filetype's size ({}) is not a multiple of the etype's ({})",
                ft.size, et.size
            ),
        ));
    }
    let rep = datarep.to_ascii_lowercase();
    if rep != "native" && rep != "internal" && rep != "external32" {
        return Err(file_err(
            MPI_ERR_UNSUPPORTED_DATAREP,
            format!("data representation `{datarep}` (native, internal and external32 are known)"),
        ));
    }
    if rep == "external32" {
        let first = with_world(|w| w.files.warned.insert((u32::MAX, "external32".to_string())));
        if first {
            eprintln!(
                "smpirun: warning: MPI_File_set_view with \"external32\": file data is stored in the \
                 native representation (no conversion)"
            );
        }
    }
    let sequential = with_file(me, h, |f, _| Ok(f.amode & MPI_MODE_SEQUENTIAL != 0))?;
    if disp < 0 && !(disp == MPI_DISPLACEMENT_CURRENT && sequential) {
        return Err(mpi_err(
            MPI_ERR_ARG,
            format!("invalid displacement {disp} (MPI_DISPLACEMENT_CURRENT needs MPI_MODE_SEQUENTIAL)"),
        ));
    }
    let view = comm_view(me, h)?;
    let disp = with_file(me, h, |f, r| {
        // Collective without a barrier before it (as SMPI): the first rank to make its k-th
        // call takes the shared pointer's place (for MPI_DISPLACEMENT_CURRENT) and resets it.
        let m = &mut f.members[r];
        m.view_calls += 1;
        if m.view_calls > f.view_calls {
            f.view_calls = m.view_calls;
            f.view_current = m.view.byte_offset(f.shared) as i64;
            f.shared = 0;
        }
        Ok(if disp == MPI_DISPLACEMENT_CURRENT {
            f.view_current
        } else {
            disp
        })
    })?;
    with_file(me, h, |f, r| {
        let m = &mut f.members[r];
        m.view = View {
            disp,
            etype,
            filetype,
            etype_dt: et.clone(),
            filetype_dt: ft.clone(),
            datarep: datarep.to_string(),
        };
        m.pos = 0;
        Ok(())
    })?;
    if info > 0 {
        set_info(me, h, info)?;
    }
    // SMPI: rank 0 moves the shared pointer to the displacement (under the mutex), then a sync.
    if view.rank == 0 {
        lock(me, h)?;
        sg_seek(me, h, disp, MPI_SEEK_SET);
        sg_store_shared(me, h)?;
        unlock(me, h);
    }
    coll::barrier(view)
}

/// `MPI_File_get_view`: displacement, etype, filetype, datarep.
pub(crate) fn get_view(me: u32, h: c_int) -> MpiResult<(i64, i32, i32, String)> {
    with_file(me, h, |f, r| {
        let v = &f.members[r].view;
        Ok((v.disp, v.etype, v.filetype, v.datarep.clone()))
    })
}

pub(crate) fn get_size(me: u32, h: c_int) -> MpiResult<i64> {
    with_file(me, h, |f, _| {
        let file = f
            .file
            .as_ref()
            .ok_or_else(|| file_err(MPI_ERR_FILE, "not open"))?;
        let m = file.metadata().map_err(|e| io_error(&f.path, &e))?;
        Ok(m.len() as i64)
    })
}

/// `MPI_File_set_size` (and, growing only, `MPI_File_preallocate`).
pub(crate) fn set_size(me: u32, h: c_int, size: i64, grow_only: bool, call: &str) -> MpiResult<()> {
    if size < 0 {
        return Err(mpi_err(MPI_ERR_ARG, format!("{call}: negative size {size}")));
    }
    check_access(me, h, true, call)?;
    let view = comm_view(me, h)?;
    let path = path_of(h);
    with_file(me, h, |f, _| {
        let file = f
            .file
            .as_ref()
            .ok_or_else(|| file_err(MPI_ERR_FILE, "not open"))?;
        let cur = file.metadata().map_err(|e| io_error(&path, &e))?.len();
        if !grow_only || (size as u64) > cur {
            file.set_len(size as u64).map_err(|e| io_error(&path, &e))?;
        }
        Ok(())
    })?;
    if grow_only {
        // Not in SMPI: no simulated cost; collective.
        return coll::barrier(view);
    }
    // SMPI: `file_->write(size)` at the rank's byte position.
    sg_file_write(me, h, size as u64)
}

pub(crate) fn sync(me: u32, h: c_int) -> MpiResult<()> {
    let view = comm_view(me, h)?;
    coll::barrier(view)
}

pub(crate) fn amode(me: u32, h: c_int) -> MpiResult<i32> {
    with_file(me, h, |f, _| Ok(f.amode))
}

pub(crate) fn comm_of(me: u32, h: c_int) -> MpiResult<c_int> {
    with_file(me, h, |f, r| Ok(f.members[r].comm))
}

pub(crate) fn set_atomicity(me: u32, h: c_int, flag: bool) -> MpiResult<()> {
    with_file(me, h, |f, _| {
        f.atomic = flag;
        Ok(())
    })
}

pub(crate) fn atomicity(me: u32, h: c_int) -> MpiResult<bool> {
    with_file(me, h, |f, _| Ok(f.atomic))
}

pub(crate) fn set_info(me: u32, h: c_int, info: c_int) -> MpiResult<()> {
    with_world(|w| {
        let own = {
            let f = w.files.get(h)?;
            f.members[f.rank_of(me)?].info
        };
        if info > 0 {
            copy_info(&mut w.infos, info, own)?;
        }
        Ok(())
    })
}

/// `MPI_File_get_info`: a new info object with the file's hints.
pub(crate) fn get_info(me: u32, h: c_int) -> MpiResult<c_int> {
    let own = with_file(me, h, |f, r| Ok(f.members[r].info))?;
    with_world(|w| {
        let out = w.infos.create();
        if own > 0 {
            copy_info(&mut w.infos, own, out)?;
        }
        Ok(out)
    })
}

/// The files rank `me` opened and has not closed (for the leaks report).
pub(crate) fn open_files(w: &World, me: u32) -> Vec<String> {
    w.files
        .table
        .iter()
        .enumerate()
        .filter_map(|(i, f)| f.as_ref().map(|f| (i, f)))
        .filter(|(_, f)| f.members.iter().any(|m| m.world == me && m.joined && !m.closed))
        .map(|(i, f)| format!("file {} ({})", i + 1, f.path))
        .collect()
}
