/* mpicxx.h -- MPI's C++ bindings (MPI-2, deprecated in MPI 2.2 and removed in
 * MPI 3.0) over our C interface, for programs that still use them: MPI::Init,
 * MPI::COMM_WORLD.Get_rank(), MPI::Datatype, MPI::Exception, ...
 *
 * Included by mpi.h for C++ unless MPICH_SKIP_MPICXX or OMPI_SKIP_MPICXX is
 * defined (as MPICH and Open MPI do). Header-only: every function is an
 * inline call of the C function, so a program that does not use these
 * bindings pays only for parsing this file.
 *
 * Handles are our C ints; the objects hold one. Errors: a call whose C
 * function fails throws MPI::Exception when the communicator's (or, for
 * calls on no communicator, MPI_COMM_WORLD's) error handler is
 * MPI::ERRORS_THROW_EXCEPTIONS; with MPI::ERRORS_RETURN the code is lost, as
 * in MPICH; MPI::ERRORS_ARE_FATAL ends the run in the C call.
 * MPI::ERRORS_THROW_EXCEPTIONS is a C error handler that does nothing
 * (created on first use, per rank), so the C call returns and the wrapper
 * throws: an exception never crosses the simulator's frames.
 *
 * Not provided: MPI::File (no MPI-IO), dynamic processes (Spawn, Connect,
 * ports, name publishing) and MPI::Win beyond creation, fence and
 * attributes; programs calling them fail to compile. */
#ifndef SMPI_RS_MPICXX_H
#define SMPI_RS_MPICXX_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Namespace-scope constants: constant-initialized (SMPI_CXX_CONSTEXPR constructors),
 * one copy per translation unit, no unused-variable warnings. */
#define SMPI_CXX_CONST static __attribute__((unused))
#if __cplusplus >= 201103L
#define SMPI_CXX_CONSTEXPR constexpr
#else
#define SMPI_CXX_CONSTEXPR
#endif

namespace MPI {

typedef MPI_Aint Aint;
typedef MPI_Offset Offset;
typedef MPI_Count Count;
typedef MPI_Fint Fint;

class Comm;
class Intracomm;
class Intercomm;
class Datatype;
class Win;
class File;

/* ---------------------------------------------------------------- Exception */

class Exception {
  public:
    Exception() : code(MPI_SUCCESS) {}
    Exception(int c) : code(c) {}
    int Get_error_code() const { return code; }
    int Get_error_class() const {
        int c = code;
        MPI_Error_class(code, &c);
        return c;
    }
    const char *Get_error_string() const {
        int len = 0;
        MPI_Error_string(code, text, &len);
        return text;
    }

  protected:
    int code;
    mutable char text[MPI_MAX_ERROR_STRING];
};

namespace detail {
/* The C handler behind MPI::ERRORS_THROW_EXCEPTIONS: it does nothing, so the
 * C call returns its code and the wrapper throws. */
inline void throw_handler_fn(MPI_Comm *, int *, ...) {}
inline MPI_Errhandler throw_handler() {
    static MPI_Errhandler h = MPI_ERRHANDLER_NULL;
    if (h == MPI_ERRHANDLER_NULL)
        MPI_Comm_create_errhandler(throw_handler_fn, &h);
    return h;
}
/* The sentinel of MPI::ERRORS_THROW_EXCEPTIONS before it has a C handle. */
const int THROW_SENTINEL = -1000;
inline int check_on(MPI_Comm comm, int rc) {
    if (rc != MPI_SUCCESS) {
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
        if (comm == MPI_COMM_NULL)
            comm = MPI_COMM_WORLD;
        MPI_Comm_get_errhandler(comm, &eh);
        if (eh == throw_handler())
            throw Exception(rc);
    }
    return rc;
}
inline int check(int rc) { return check_on(MPI_COMM_WORLD, rc); }
} // namespace detail

/* ---------------------------------------------------------------- Status */

class Status {
  public:
    Status() {
        st.MPI_SOURCE = MPI_ANY_SOURCE;
        st.MPI_TAG = MPI_ANY_TAG;
        st.MPI_ERROR = MPI_SUCCESS;
    }
    Status(const MPI_Status &s) : st(s) {}
    operator MPI_Status *() { return &st; }
    operator const MPI_Status *() const { return &st; }
    operator MPI_Status &() { return st; }
    int Get_source() const { return st.MPI_SOURCE; }
    int Get_tag() const { return st.MPI_TAG; }
    int Get_error() const { return st.MPI_ERROR; }
    void Set_source(int s) { st.MPI_SOURCE = s; }
    void Set_tag(int t) { st.MPI_TAG = t; }
    void Set_error(int e) { st.MPI_ERROR = e; }
    inline int Get_count(const Datatype &dt) const;
    inline int Get_elements(const Datatype &dt) const;
    inline void Set_elements(const Datatype &dt, int n);
    bool Is_cancelled() const {
        int f = 0;
        MPI_Test_cancelled(&st, &f);
        return f != 0;
    }
    void Set_cancelled(bool f) { MPI_Status_set_cancelled(&st, f); }

    MPI_Status st;
};

/* ---------------------------------------------------------------- Group */

class Group {
  public:
    SMPI_CXX_CONSTEXPR Group() : h(MPI_GROUP_NULL) {}
    SMPI_CXX_CONSTEXPR Group(MPI_Group g) : h(g) {}
    operator MPI_Group() const { return h; }
    bool operator==(const Group &o) const { return h == o.h; }
    bool operator!=(const Group &o) const { return h != o.h; }
    int Get_size() const { int n = 0; detail::check(MPI_Group_size(h, &n)); return n; }
    int Get_rank() const { int r = 0; detail::check(MPI_Group_rank(h, &r)); return r; }
    static void Translate_ranks(const Group &a, int n, const int r1[], const Group &b, int r2[]) {
        detail::check(MPI_Group_translate_ranks(a.h, n, r1, b.h, r2));
    }
    static int Compare(const Group &a, const Group &b) {
        int r = 0;
        detail::check(MPI_Group_compare(a.h, b.h, &r));
        return r;
    }
    static Group Union(const Group &a, const Group &b) { MPI_Group g; detail::check(MPI_Group_union(a.h, b.h, &g)); return g; }
    static Group Intersect(const Group &a, const Group &b) { MPI_Group g; detail::check(MPI_Group_intersection(a.h, b.h, &g)); return g; }
    static Group Difference(const Group &a, const Group &b) { MPI_Group g; detail::check(MPI_Group_difference(a.h, b.h, &g)); return g; }
    Group Incl(int n, const int r[]) const { MPI_Group g; detail::check(MPI_Group_incl(h, n, r, &g)); return g; }
    Group Excl(int n, const int r[]) const { MPI_Group g; detail::check(MPI_Group_excl(h, n, r, &g)); return g; }
    Group Range_incl(int n, const int r[][3]) const {
        MPI_Group g;
        detail::check(MPI_Group_range_incl(h, n, (int(*)[3])r, &g));
        return g;
    }
    Group Range_excl(int n, const int r[][3]) const {
        MPI_Group g;
        detail::check(MPI_Group_range_excl(h, n, (int(*)[3])r, &g));
        return g;
    }
    void Free() { detail::check(MPI_Group_free(&h)); }

  protected:
    MPI_Group h;
};

/* ---------------------------------------------------------------- Info */

class Info {
  public:
    SMPI_CXX_CONSTEXPR Info() : h(MPI_INFO_NULL) {}
    SMPI_CXX_CONSTEXPR Info(MPI_Info i) : h(i) {}
    operator MPI_Info() const { return h; }
    static Info Create() { MPI_Info i; detail::check(MPI_Info_create(&i)); return i; }
    void Set(const char *k, const char *v) const { detail::check(MPI_Info_set(h, k, v)); }
    bool Get(const char *k, int len, char *v) const {
        int f = 0;
        detail::check(MPI_Info_get(h, k, len, v, &f));
        return f != 0;
    }
    bool Get_valuelen(const char *k, int &len) const {
        int f = 0;
        detail::check(MPI_Info_get_valuelen(h, k, &len, &f));
        return f != 0;
    }
    int Get_nkeys() const { int n = 0; detail::check(MPI_Info_get_nkeys(h, &n)); return n; }
    void Get_nthkey(int n, char *k) const { detail::check(MPI_Info_get_nthkey(h, n, k)); }
    void Delete(const char *k) const { detail::check(MPI_Info_delete(h, k)); }
    Info Dup() const { MPI_Info i; detail::check(MPI_Info_dup(h, &i)); return i; }
    void Free() { detail::check(MPI_Info_free(&h)); }

  protected:
    MPI_Info h;
};

/* ---------------------------------------------------------------- Datatype */

class Datatype {
  public:
    typedef int Copy_attr_function(const Datatype &, int, void *, void *, void *, bool &);
    typedef int Delete_attr_function(Datatype &, int, void *, void *);

    SMPI_CXX_CONSTEXPR Datatype() : h(MPI_DATATYPE_NULL) {}
    SMPI_CXX_CONSTEXPR Datatype(MPI_Datatype d) : h(d) {}
    operator MPI_Datatype() const { return h; }
    bool operator==(const Datatype &o) const { return h == o.h; }
    bool operator!=(const Datatype &o) const { return h != o.h; }

    Datatype Create_contiguous(int n) const { MPI_Datatype d; detail::check(MPI_Type_contiguous(n, h, &d)); return d; }
    Datatype Create_vector(int n, int bl, int stride) const {
        MPI_Datatype d;
        detail::check(MPI_Type_vector(n, bl, stride, h, &d));
        return d;
    }
    Datatype Create_hvector(int n, int bl, Aint stride) const {
        MPI_Datatype d;
        detail::check(MPI_Type_create_hvector(n, bl, stride, h, &d));
        return d;
    }
    Datatype Create_indexed(int n, const int bl[], const int disp[]) const {
        MPI_Datatype d;
        detail::check(MPI_Type_indexed(n, bl, disp, h, &d));
        return d;
    }
    Datatype Create_hindexed(int n, const int bl[], const Aint disp[]) const {
        MPI_Datatype d;
        detail::check(MPI_Type_create_hindexed(n, bl, disp, h, &d));
        return d;
    }
    Datatype Create_indexed_block(int n, int bl, const int disp[]) const {
        MPI_Datatype d;
        detail::check(MPI_Type_create_indexed_block(n, bl, disp, h, &d));
        return d;
    }
    static Datatype Create_struct(int n, const int bl[], const Aint disp[], const Datatype types[]) {
        MPI_Datatype *t = new MPI_Datatype[n > 0 ? n : 1];
        for (int i = 0; i < n; i++)
            t[i] = types[i];
        MPI_Datatype d;
        int rc = MPI_Type_create_struct(n, bl, disp, t, &d);
        delete[] t;
        detail::check(rc);
        return d;
    }
    Datatype Create_subarray(int nd, const int sizes[], const int sub[], const int starts[], int order) const {
        MPI_Datatype d;
        detail::check(MPI_Type_create_subarray(nd, sizes, sub, starts, order, h, &d));
        return d;
    }
    Datatype Create_resized(Aint lb, Aint extent) const {
        MPI_Datatype d;
        detail::check(MPI_Type_create_resized(h, lb, extent, &d));
        return d;
    }
    Datatype Dup() const { MPI_Datatype d; detail::check(MPI_Type_dup(h, &d)); return d; }
    void Commit() { detail::check(MPI_Type_commit(&h)); }
    void Free() { detail::check(MPI_Type_free(&h)); }
    int Get_size() const { int s = 0; detail::check(MPI_Type_size(h, &s)); return s; }
    void Get_extent(Aint &lb, Aint &extent) const { detail::check(MPI_Type_get_extent(h, &lb, &extent)); }
    void Get_true_extent(Aint &lb, Aint &extent) const { detail::check(MPI_Type_get_true_extent(h, &lb, &extent)); }
    void Get_envelope(int &ni, int &na, int &nd, int &combiner) const {
        detail::check(MPI_Type_get_envelope(h, &ni, &na, &nd, &combiner));
    }
    void Get_contents(int ni, int na, int nd, int ints[], Aint aints[], Datatype types[]) const {
        MPI_Datatype *t = new MPI_Datatype[nd > 0 ? nd : 1];
        int rc = MPI_Type_get_contents(h, ni, na, nd, ints, aints, t);
        for (int i = 0; rc == MPI_SUCCESS && i < nd; i++)
            types[i] = t[i];
        delete[] t;
        detail::check(rc);
    }
    void Set_name(const char *n) const { detail::check(MPI_Type_set_name(h, n)); }
    void Get_name(char *n, int &len) const { detail::check(MPI_Type_get_name(h, n, &len)); }
    int Pack_size(int count, const Comm &comm) const;
    void Pack(const void *in, int count, void *out, int size, int &pos, const Comm &comm) const;
    void Unpack(const void *in, int size, void *out, int count, int &pos, const Comm &comm) const;
    static Datatype Match_size(int typeclass, int size) {
        MPI_Datatype d;
        detail::check(MPI_Type_match_size(typeclass, size, &d));
        return d;
    }
    static Datatype Create_f90_integer(int r) { MPI_Datatype d; detail::check(MPI_Type_create_f90_integer(r, &d)); return d; }
    static Datatype Create_f90_real(int p, int r) { MPI_Datatype d; detail::check(MPI_Type_create_f90_real(p, r, &d)); return d; }
    static Datatype Create_f90_complex(int p, int r) {
        MPI_Datatype d;
        detail::check(MPI_Type_create_f90_complex(p, r, &d));
        return d;
    }

    /* Attributes: the C++ callbacks ride in the C keyval's extra state. */
    static inline int Create_keyval(Copy_attr_function *copy, Delete_attr_function *del, void *extra);
    static void Free_keyval(int &k) { detail::check(MPI_Type_free_keyval(&k)); }
    void Set_attr(int k, const void *v) const { detail::check(MPI_Type_set_attr(h, k, (void *)v)); }
    bool Get_attr(int k, void *v) const {
        int f = 0;
        detail::check(MPI_Type_get_attr(h, k, v, &f));
        return f != 0;
    }
    void Delete_attr(int k) const { detail::check(MPI_Type_delete_attr(h, k)); }
    static int NULL_COPY_FN(const Datatype &, int, void *, void *, void *, bool &f) { f = false; return MPI_SUCCESS; }
    static int DUP_FN(const Datatype &, int, void *, void *in, void *out, bool &f) {
        *(void **)out = in;
        f = true;
        return MPI_SUCCESS;
    }
    static int NULL_DELETE_FN(Datatype &, int, void *, void *) { return MPI_SUCCESS; }

  protected:
    MPI_Datatype h;
};

inline int Status::Get_count(const Datatype &dt) const {
    int n = 0;
    detail::check(MPI_Get_count(&st, dt, &n));
    return n;
}
inline int Status::Get_elements(const Datatype &dt) const {
    int n = 0;
    detail::check(MPI_Get_elements(&st, dt, &n));
    return n;
}
inline void Status::Set_elements(const Datatype &dt, int n) { detail::check(MPI_Status_set_elements(&st, dt, n)); }

/* ---------------------------------------------------------------- Op */

typedef void User_function(const void *in, void *inout, int len, const Datatype &dt);

namespace detail {
/* C reduction functions get no op: a fixed set of trampolines, one per
 * user operation alive at a time. */
const int OP_SLOTS = 32;
inline User_function **op_slots() {
    static User_function *slots[OP_SLOTS];
    return slots;
}
template <int N> void op_trampoline(void *in, void *inout, int *len, MPI_Datatype *dt) {
    op_slots()[N](in, inout, *len, Datatype(*dt));
}
template <int N> struct OpTable {
    static void fill(MPI_User_function **t) {
        t[N - 1] = op_trampoline<N - 1>;
        OpTable<N - 1>::fill(t);
    }
};
template <> struct OpTable<0> {
    static void fill(MPI_User_function **) {}
};
} // namespace detail

class Op {
  public:
    SMPI_CXX_CONSTEXPR Op() : h(MPI_OP_NULL), slot(-1) {}
    SMPI_CXX_CONSTEXPR Op(MPI_Op o) : h(o), slot(-1) {}
    operator MPI_Op() const { return h; }
    bool operator==(const Op &o) const { return h == o.h; }
    bool operator!=(const Op &o) const { return h != o.h; }
    void Init(User_function *f, bool commute) {
        User_function **slots = detail::op_slots();
        for (int i = 0; i < detail::OP_SLOTS; i++) {
            if (slots[i] == 0) {
                MPI_User_function *tr[detail::OP_SLOTS];
                detail::OpTable<detail::OP_SLOTS>::fill(tr);
                slots[i] = f;
                slot = i;
                detail::check(MPI_Op_create(tr[i], commute, &h));
                return;
            }
        }
        fprintf(stderr, "MPI::Op::Init: more than %d user operations at once are not supported\n",
                detail::OP_SLOTS);
        abort();
    }
    void Free() {
        if (slot >= 0)
            detail::op_slots()[slot] = 0;
        slot = -1;
        detail::check(MPI_Op_free(&h));
    }
    bool Is_commutative() const { int c = 0; detail::check(MPI_Op_commutative(h, &c)); return c != 0; }
    void Reduce_local(const void *in, void *inout, int count, const Datatype &dt) const {
        detail::check(MPI_Reduce_local(in, inout, count, dt, h));
    }

  protected:
    MPI_Op h;
    int slot;
};

/* ---------------------------------------------------------------- Errhandler */

class Errhandler {
  public:
    SMPI_CXX_CONSTEXPR Errhandler() : h(MPI_ERRHANDLER_NULL) {}
    SMPI_CXX_CONSTEXPR Errhandler(MPI_Errhandler e) : h(e) {}
    /* The C handle (MPI::ERRORS_THROW_EXCEPTIONS gets its C handler). */
    operator MPI_Errhandler() const { return h == detail::THROW_SENTINEL ? detail::throw_handler() : h; }
    bool operator==(const Errhandler &o) const { return (MPI_Errhandler) * this == (MPI_Errhandler)o; }
    bool operator!=(const Errhandler &o) const { return !(*this == o); }
    void Free() {
        /* Our error handlers are never deallocated; MPI_Errhandler_free only
         * clears the handle. */
        h = MPI_ERRHANDLER_NULL;
    }

  protected:
    MPI_Errhandler h;
};

/* ---------------------------------------------------------------- Request */

class Request {
  public:
    SMPI_CXX_CONSTEXPR Request() : h(MPI_REQUEST_NULL) {}
    SMPI_CXX_CONSTEXPR Request(MPI_Request r) : h(r) {}
    operator MPI_Request() const { return h; }
    operator MPI_Request *() { return &h; }
    bool operator==(const Request &o) const { return h == o.h; }
    bool operator!=(const Request &o) const { return h != o.h; }
    void Wait(Status &s) { detail::check(MPI_Wait(&h, &s.st)); }
    void Wait() { detail::check(MPI_Wait(&h, MPI_STATUS_IGNORE)); }
    bool Test(Status &s) { int f = 0; detail::check(MPI_Test(&h, &f, &s.st)); return f != 0; }
    bool Test() { int f = 0; detail::check(MPI_Test(&h, &f, MPI_STATUS_IGNORE)); return f != 0; }
    void Free() { detail::check(MPI_Request_free(&h)); }
    void Cancel() const { MPI_Request r = h; detail::check(MPI_Cancel(&r)); }
    bool Get_status(Status &s) const { int f = 0; detail::check(MPI_Request_get_status(h, &f, &s.st)); return f != 0; }
    bool Get_status() const { int f = 0; detail::check(MPI_Request_get_status(h, &f, MPI_STATUS_IGNORE)); return f != 0; }

    static void Waitall(int n, Request reqs[], Status st[]) { all(n, reqs, st, true); }
    static void Waitall(int n, Request reqs[]) { all(n, reqs, 0, true); }
    static bool Testall(int n, Request reqs[], Status st[]) { return all(n, reqs, st, false); }
    static bool Testall(int n, Request reqs[]) { return all(n, reqs, 0, false); }
    static int Waitany(int n, Request reqs[], Status &s) { return any(n, reqs, &s.st, true, 0); }
    static int Waitany(int n, Request reqs[]) { return any(n, reqs, MPI_STATUS_IGNORE, true, 0); }
    static bool Testany(int n, Request reqs[], int &idx, Status &s) { int f = 0; idx = any(n, reqs, &s.st, false, &f); return f != 0; }
    static bool Testany(int n, Request reqs[], int &idx) { int f = 0; idx = any(n, reqs, MPI_STATUS_IGNORE, false, &f); return f != 0; }

  protected:
    MPI_Request h;

  private:
    static bool all(int n, Request reqs[], Status st[], bool wait) {
        MPI_Request *r = new MPI_Request[n > 0 ? n : 1];
        MPI_Status *s = st ? new MPI_Status[n > 0 ? n : 1] : MPI_STATUSES_IGNORE;
        for (int i = 0; i < n; i++)
            r[i] = reqs[i].h;
        int f = 1;
        int rc = wait ? MPI_Waitall(n, r, s) : MPI_Testall(n, r, &f, s);
        for (int i = 0; i < n; i++) {
            reqs[i].h = r[i];
            if (st && f)
                st[i].st = s[i];
        }
        delete[] r;
        if (st)
            delete[] s;
        detail::check(rc);
        return f != 0;
    }
    static int any(int n, Request reqs[], MPI_Status *s, bool wait, int *flag) {
        MPI_Request *r = new MPI_Request[n > 0 ? n : 1];
        for (int i = 0; i < n; i++)
            r[i] = reqs[i].h;
        int idx = MPI_UNDEFINED;
        int rc = wait ? MPI_Waitany(n, r, &idx, s) : MPI_Testany(n, r, &idx, flag, s);
        for (int i = 0; i < n; i++)
            reqs[i].h = r[i];
        delete[] r;
        detail::check(rc);
        return idx;
    }
};

class Prequest : public Request {
  public:
    SMPI_CXX_CONSTEXPR Prequest() : Request() {}
    SMPI_CXX_CONSTEXPR Prequest(MPI_Request r) : Request(r) {}
    void Start() { detail::check(MPI_Start(&h)); }
    static void Startall(int n, Prequest reqs[]) {
        for (int i = 0; i < n; i++)
            reqs[i].Start();
    }
};

class Grequest : public Request {
  public:
    typedef int Query_function(void *, Status &);
    typedef int Free_function(void *);
    typedef int Cancel_function(void *, bool);
    SMPI_CXX_CONSTEXPR Grequest() : Request() {}
    SMPI_CXX_CONSTEXPR Grequest(MPI_Request r) : Request(r) {}
    void Complete() { detail::check(MPI_Grequest_complete(h)); }
};

/* ---------------------------------------------------------------- Comm */

class Comm {
  public:
    typedef void Errhandler_function(Comm &, int *, ...);
    typedef int Copy_attr_function(const Comm &, int, void *, void *, void *, bool &);
    typedef int Delete_attr_function(Comm &, int, void *, void *);

    SMPI_CXX_CONSTEXPR Comm() : h(MPI_COMM_NULL) {}
    SMPI_CXX_CONSTEXPR Comm(MPI_Comm c) : h(c) {}
    operator MPI_Comm() const { return h; }
    bool operator==(const Comm &o) const { return h == o.h; }
    bool operator!=(const Comm &o) const { return h != o.h; }

    int Get_rank() const { int r = 0; check(MPI_Comm_rank(h, &r)); return r; }
    int Get_size() const { int n = 0; check(MPI_Comm_size(h, &n)); return n; }
    Group Get_group() const { MPI_Group g; check(MPI_Comm_group(h, &g)); return g; }
    static int Compare(const Comm &a, const Comm &b) {
        int r = 0;
        detail::check_on(a.h, MPI_Comm_compare(a.h, b.h, &r));
        return r;
    }
    bool Is_inter() const { int f = 0; check(MPI_Comm_test_inter(h, &f)); return f != 0; }
    int Get_topology() const { int t = MPI_UNDEFINED; check(MPI_Topo_test(h, &t)); return t; }
    void Free() { check(MPI_Comm_free(&h)); }
    void Abort(int code) const { MPI_Abort(h, code); }
    void Set_name(const char *n) const { check(MPI_Comm_set_name(h, n)); }
    void Get_name(char *n, int &len) const { check(MPI_Comm_get_name(h, n, &len)); }

    /* Point to point */
    void Send(const void *b, int n, const Datatype &dt, int dest, int tag) const { check(MPI_Send(b, n, dt, dest, tag, h)); }
    void Ssend(const void *b, int n, const Datatype &dt, int dest, int tag) const { check(MPI_Ssend(b, n, dt, dest, tag, h)); }
    void Rsend(const void *b, int n, const Datatype &dt, int dest, int tag) const { check(MPI_Rsend(b, n, dt, dest, tag, h)); }
    void Bsend(const void *b, int n, const Datatype &dt, int dest, int tag) const { check(MPI_Bsend(b, n, dt, dest, tag, h)); }
    void Recv(void *b, int n, const Datatype &dt, int src, int tag, Status &s) const {
        check(MPI_Recv(b, n, dt, src, tag, h, &s.st));
    }
    void Recv(void *b, int n, const Datatype &dt, int src, int tag) const {
        check(MPI_Recv(b, n, dt, src, tag, h, MPI_STATUS_IGNORE));
    }
    Request Isend(const void *b, int n, const Datatype &dt, int dest, int tag) const {
        MPI_Request r;
        check(MPI_Isend(b, n, dt, dest, tag, h, &r));
        return r;
    }
    Request Issend(const void *b, int n, const Datatype &dt, int dest, int tag) const {
        MPI_Request r;
        check(MPI_Issend(b, n, dt, dest, tag, h, &r));
        return r;
    }
    Request Irsend(const void *b, int n, const Datatype &dt, int dest, int tag) const {
        MPI_Request r;
        check(MPI_Irsend(b, n, dt, dest, tag, h, &r));
        return r;
    }
    Request Ibsend(const void *b, int n, const Datatype &dt, int dest, int tag) const {
        MPI_Request r;
        check(MPI_Ibsend(b, n, dt, dest, tag, h, &r));
        return r;
    }
    Request Irecv(void *b, int n, const Datatype &dt, int src, int tag) const {
        MPI_Request r;
        check(MPI_Irecv(b, n, dt, src, tag, h, &r));
        return r;
    }
    Prequest Send_init(const void *b, int n, const Datatype &dt, int dest, int tag) const {
        MPI_Request r;
        check(MPI_Send_init(b, n, dt, dest, tag, h, &r));
        return r;
    }
    Prequest Recv_init(void *b, int n, const Datatype &dt, int src, int tag) const {
        MPI_Request r;
        check(MPI_Recv_init(b, n, dt, src, tag, h, &r));
        return r;
    }
    void Sendrecv(const void *sb, int sn, const Datatype &st, int dest, int stag, void *rb, int rn,
                  const Datatype &rt, int src, int rtag, Status &s) const {
        check(MPI_Sendrecv(sb, sn, st, dest, stag, rb, rn, rt, src, rtag, h, &s.st));
    }
    void Sendrecv(const void *sb, int sn, const Datatype &st, int dest, int stag, void *rb, int rn,
                  const Datatype &rt, int src, int rtag) const {
        check(MPI_Sendrecv(sb, sn, st, dest, stag, rb, rn, rt, src, rtag, h, MPI_STATUS_IGNORE));
    }
    void Sendrecv_replace(void *b, int n, const Datatype &dt, int dest, int stag, int src, int rtag, Status &s) const {
        check(MPI_Sendrecv_replace(b, n, dt, dest, stag, src, rtag, h, &s.st));
    }
    void Sendrecv_replace(void *b, int n, const Datatype &dt, int dest, int stag, int src, int rtag) const {
        check(MPI_Sendrecv_replace(b, n, dt, dest, stag, src, rtag, h, MPI_STATUS_IGNORE));
    }
    void Probe(int src, int tag, Status &s) const { check(MPI_Probe(src, tag, h, &s.st)); }
    void Probe(int src, int tag) const { check(MPI_Probe(src, tag, h, MPI_STATUS_IGNORE)); }
    bool Iprobe(int src, int tag, Status &s) const { int f = 0; check(MPI_Iprobe(src, tag, h, &f, &s.st)); return f != 0; }
    bool Iprobe(int src, int tag) const { int f = 0; check(MPI_Iprobe(src, tag, h, &f, MPI_STATUS_IGNORE)); return f != 0; }

    /* Collectives (on intra- and intercommunicators alike) */
    void Barrier() const { check(MPI_Barrier(h)); }
    void Bcast(void *b, int n, const Datatype &dt, int root) const { check(MPI_Bcast(b, n, dt, root, h)); }
    void Gather(const void *sb, int sn, const Datatype &st, void *rb, int rn, const Datatype &rt, int root) const {
        check(MPI_Gather(sb, sn, st, rb, rn, rt, root, h));
    }
    void Gatherv(const void *sb, int sn, const Datatype &st, void *rb, const int rc[], const int d[],
                 const Datatype &rt, int root) const {
        check(MPI_Gatherv(sb, sn, st, rb, rc, d, rt, root, h));
    }
    void Scatter(const void *sb, int sn, const Datatype &st, void *rb, int rn, const Datatype &rt, int root) const {
        check(MPI_Scatter(sb, sn, st, rb, rn, rt, root, h));
    }
    void Scatterv(const void *sb, const int sc[], const int d[], const Datatype &st, void *rb, int rn,
                  const Datatype &rt, int root) const {
        check(MPI_Scatterv(sb, sc, d, st, rb, rn, rt, root, h));
    }
    void Allgather(const void *sb, int sn, const Datatype &st, void *rb, int rn, const Datatype &rt) const {
        check(MPI_Allgather(sb, sn, st, rb, rn, rt, h));
    }
    void Allgatherv(const void *sb, int sn, const Datatype &st, void *rb, const int rc[], const int d[],
                    const Datatype &rt) const {
        check(MPI_Allgatherv(sb, sn, st, rb, rc, d, rt, h));
    }
    void Alltoall(const void *sb, int sn, const Datatype &st, void *rb, int rn, const Datatype &rt) const {
        check(MPI_Alltoall(sb, sn, st, rb, rn, rt, h));
    }
    void Alltoallv(const void *sb, const int sc[], const int sd[], const Datatype &st, void *rb, const int rc[],
                   const int rd[], const Datatype &rt) const {
        check(MPI_Alltoallv(sb, sc, sd, st, rb, rc, rd, rt, h));
    }
    void Alltoallw(const void *sb, const int sc[], const int sd[], const Datatype st[], void *rb, const int rc[],
                   const int rd[], const Datatype rt[]) const {
        int n = remote_or_local_size();
        MPI_Datatype *s = new MPI_Datatype[n > 0 ? n : 1], *r = new MPI_Datatype[n > 0 ? n : 1];
        for (int i = 0; i < n; i++) {
            s[i] = st[i];
            r[i] = rt[i];
        }
        int rc2 = MPI_Alltoallw(sb, sc, sd, s, rb, rc, rd, r, h);
        delete[] s;
        delete[] r;
        check(rc2);
    }
    void Reduce(const void *sb, void *rb, int n, const Datatype &dt, const Op &op, int root) const {
        check(MPI_Reduce(sb, rb, n, dt, op, root, h));
    }
    void Allreduce(const void *sb, void *rb, int n, const Datatype &dt, const Op &op) const {
        check(MPI_Allreduce(sb, rb, n, dt, op, h));
    }
    void Reduce_scatter(const void *sb, void *rb, const int rc[], const Datatype &dt, const Op &op) const {
        check(MPI_Reduce_scatter(sb, rb, rc, dt, op, h));
    }
    void Reduce_scatter_block(const void *sb, void *rb, int rc, const Datatype &dt, const Op &op) const {
        check(MPI_Reduce_scatter_block(sb, rb, rc, dt, op, h));
    }

    /* Error handling */
    void Set_errhandler(const Errhandler &e) const { check(MPI_Comm_set_errhandler(h, e)); }
    Errhandler Get_errhandler() const {
        MPI_Errhandler e;
        check(MPI_Comm_get_errhandler(h, &e));
        return e == detail::throw_handler() ? Errhandler(detail::THROW_SENTINEL) : Errhandler(e);
    }
    void Call_errhandler(int code) const { check(MPI_Comm_call_errhandler(h, code)); }
    static inline Errhandler Create_errhandler(Errhandler_function *f);

    /* Attributes */
    static inline int Create_keyval(Copy_attr_function *copy, Delete_attr_function *del, void *extra);
    static void Free_keyval(int &k) { detail::check(MPI_Comm_free_keyval(&k)); }
    void Set_attr(int k, const void *v) const { check(MPI_Comm_set_attr(h, k, (void *)v)); }
    bool Get_attr(int k, void *v) const { int f = 0; check(MPI_Comm_get_attr(h, k, v, &f)); return f != 0; }
    void Delete_attr(int k) const { check(MPI_Comm_delete_attr(h, k)); }
    static int NULL_COPY_FN(const Comm &, int, void *, void *, void *, bool &f) { f = false; return MPI_SUCCESS; }
    static int DUP_FN(const Comm &, int, void *, void *in, void *out, bool &f) {
        *(void **)out = in;
        f = true;
        return MPI_SUCCESS;
    }
    static int NULL_DELETE_FN(Comm &, int, void *, void *) { return MPI_SUCCESS; }

    virtual Comm &Clone() const { return *new Comm(h); }

  protected:
    int check(int rc) const { return detail::check_on(h, rc); }
    int remote_or_local_size() const {
        int inter = 0, n = 0;
        MPI_Comm_test_inter(h, &inter);
        if (inter)
            MPI_Comm_remote_size(h, &n);
        else
            MPI_Comm_size(h, &n);
        return n;
    }
    MPI_Comm h;
};

class Intercomm;

class Intracomm : public Comm {
  public:
    SMPI_CXX_CONSTEXPR Intracomm() : Comm() {}
    SMPI_CXX_CONSTEXPR Intracomm(MPI_Comm c) : Comm(c) {}
    Intracomm(const Comm &c) : Comm((MPI_Comm)c) {}
    Intracomm Dup() const { MPI_Comm c; check(MPI_Comm_dup(h, &c)); return c; }
    Intracomm Split(int color, int key) const { MPI_Comm c; check(MPI_Comm_split(h, color, key, &c)); return c; }
    Intracomm Split_type(int type, int key, const Info &info) const {
        MPI_Comm c;
        check(MPI_Comm_split_type(h, type, key, info, &c));
        return c;
    }
    Intracomm Create(const Group &g) const { MPI_Comm c; check(MPI_Comm_create(h, g, &c)); return c; }
    inline Intercomm Create_intercomm(int lleader, const Comm &peer, int rleader, int tag) const;
    void Scan(const void *sb, void *rb, int n, const Datatype &dt, const Op &op) const {
        check(MPI_Scan(sb, rb, n, dt, op, h));
    }
    void Exscan(const void *sb, void *rb, int n, const Datatype &dt, const Op &op) const {
        check(MPI_Exscan(sb, rb, n, dt, op, h));
    }
    inline class Cartcomm Create_cart(int nd, const int dims[], const bool periods[], bool reorder) const;
    inline class Graphcomm Create_graph(int n, const int index[], const int edges[], bool reorder) const;
    inline class Distgraphcomm Dist_graph_create_adjacent(int in, const int src[], const int sw[], int out,
                                                          const int dst[], const int dw[], const Info &info,
                                                          bool reorder) const;
    inline class Distgraphcomm Dist_graph_create_adjacent(int in, const int src[], int out, const int dst[],
                                                          const Info &info, bool reorder) const;
    virtual Intracomm &Clone() const { return *new Intracomm(h); }
};

class Intercomm : public Comm {
  public:
    SMPI_CXX_CONSTEXPR Intercomm() : Comm() {}
    SMPI_CXX_CONSTEXPR Intercomm(MPI_Comm c) : Comm(c) {}
    Intercomm(const Comm &c) : Comm((MPI_Comm)c) {}
    Intercomm Dup() const { MPI_Comm c; check(MPI_Comm_dup(h, &c)); return c; }
    Intercomm Split(int color, int key) const { MPI_Comm c; check(MPI_Comm_split(h, color, key, &c)); return c; }
    Intercomm Create(const Group &g) const { MPI_Comm c; check(MPI_Comm_create(h, g, &c)); return c; }
    int Get_remote_size() const { int n = 0; check(MPI_Comm_remote_size(h, &n)); return n; }
    Group Get_remote_group() const { MPI_Group g; check(MPI_Comm_remote_group(h, &g)); return g; }
    Intracomm Merge(bool high) const { MPI_Comm c; check(MPI_Intercomm_merge(h, high, &c)); return c; }
    virtual Intercomm &Clone() const { return *new Intercomm(h); }
};

inline Intercomm Intracomm::Create_intercomm(int lleader, const Comm &peer, int rleader, int tag) const {
    MPI_Comm c;
    check(MPI_Intercomm_create(h, lleader, peer, rleader, tag, &c));
    return c;
}

class Cartcomm : public Intracomm {
  public:
    SMPI_CXX_CONSTEXPR Cartcomm() : Intracomm() {}
    SMPI_CXX_CONSTEXPR Cartcomm(MPI_Comm c) : Intracomm(c) {}
    Cartcomm(const Comm &c) : Intracomm((MPI_Comm)c) {}
    Cartcomm Dup() const { MPI_Comm c; check(MPI_Comm_dup(h, &c)); return c; }
    int Get_dim() const { int n = 0; check(MPI_Cartdim_get(h, &n)); return n; }
    void Get_topo(int maxdims, int dims[], bool periods[], int coords[]) const {
        int *p = new int[maxdims > 0 ? maxdims : 1];
        int rc = MPI_Cart_get(h, maxdims, dims, p, coords);
        for (int i = 0; rc == MPI_SUCCESS && i < maxdims; i++)
            periods[i] = p[i] != 0;
        delete[] p;
        check(rc);
    }
    int Get_cart_rank(const int coords[]) const { int r = 0; check(MPI_Cart_rank(h, coords, &r)); return r; }
    void Get_coords(int rank, int maxdims, int coords[]) const { check(MPI_Cart_coords(h, rank, maxdims, coords)); }
    void Shift(int dir, int disp, int &src, int &dst) const { check(MPI_Cart_shift(h, dir, disp, &src, &dst)); }
    Cartcomm Sub(const bool remain[]) const {
        int n = Get_dim();
        int *r = new int[n > 0 ? n : 1];
        for (int i = 0; i < n; i++)
            r[i] = remain[i];
        MPI_Comm c;
        int rc = MPI_Cart_sub(h, r, &c);
        delete[] r;
        check(rc);
        return c;
    }
    virtual Cartcomm &Clone() const { return *new Cartcomm(h); }
};

class Graphcomm : public Intracomm {
  public:
    SMPI_CXX_CONSTEXPR Graphcomm() : Intracomm() {}
    SMPI_CXX_CONSTEXPR Graphcomm(MPI_Comm c) : Intracomm(c) {}
    Graphcomm(const Comm &c) : Intracomm((MPI_Comm)c) {}
    Graphcomm Dup() const { MPI_Comm c; check(MPI_Comm_dup(h, &c)); return c; }
    void Get_dims(int nnodes[], int nedges[]) const { check(MPI_Graphdims_get(h, nnodes, nedges)); }
    void Get_topo(int mi, int me, int index[], int edges[]) const { check(MPI_Graph_get(h, mi, me, index, edges)); }
    int Get_neighbors_count(int rank) const { int n = 0; check(MPI_Graph_neighbors_count(h, rank, &n)); return n; }
    void Get_neighbors(int rank, int max, int nb[]) const { check(MPI_Graph_neighbors(h, rank, max, nb)); }
    virtual Graphcomm &Clone() const { return *new Graphcomm(h); }
};

class Distgraphcomm : public Intracomm {
  public:
    SMPI_CXX_CONSTEXPR Distgraphcomm() : Intracomm() {}
    SMPI_CXX_CONSTEXPR Distgraphcomm(MPI_Comm c) : Intracomm(c) {}
    Distgraphcomm(const Comm &c) : Intracomm((MPI_Comm)c) {}
    Distgraphcomm Dup() const { MPI_Comm c; check(MPI_Comm_dup(h, &c)); return c; }
    void Get_dist_neighbors_count(int &in, int &out, bool &weighted) const {
        int w = 0;
        check(MPI_Dist_graph_neighbors_count(h, &in, &out, &w));
        weighted = w != 0;
    }
    void Get_dist_neighbors(int maxin, int src[], int sw[], int maxout, int dst[], int dw[]) const {
        check(MPI_Dist_graph_neighbors(h, maxin, src, sw, maxout, dst, dw));
    }
    virtual Distgraphcomm &Clone() const { return *new Distgraphcomm(h); }
};

inline Cartcomm Intracomm::Create_cart(int nd, const int dims[], const bool periods[], bool reorder) const {
    int *p = new int[nd > 0 ? nd : 1];
    for (int i = 0; i < nd; i++)
        p[i] = periods[i];
    MPI_Comm c;
    int rc = MPI_Cart_create(h, nd, dims, p, reorder, &c);
    delete[] p;
    check(rc);
    return c;
}
inline Graphcomm Intracomm::Create_graph(int n, const int index[], const int edges[], bool reorder) const {
    MPI_Comm c;
    check(MPI_Graph_create(h, n, index, edges, reorder, &c));
    return c;
}
inline Distgraphcomm Intracomm::Dist_graph_create_adjacent(int in, const int src[], const int sw[], int out,
                                                           const int dst[], const int dw[], const Info &info,
                                                           bool reorder) const {
    MPI_Comm c;
    check(MPI_Dist_graph_create_adjacent(h, in, src, sw, out, dst, dw, info, reorder, &c));
    return c;
}
inline Distgraphcomm Intracomm::Dist_graph_create_adjacent(int in, const int src[], int out, const int dst[],
                                                           const Info &info, bool reorder) const {
    MPI_Comm c;
    check(MPI_Dist_graph_create_adjacent(h, in, src, MPI_UNWEIGHTED, out, dst, MPI_UNWEIGHTED, info, reorder, &c));
    return c;
}

inline int Datatype::Pack_size(int count, const Comm &comm) const {
    int s = 0;
    detail::check_on(comm, MPI_Pack_size(count, h, comm, &s));
    return s;
}
inline void Datatype::Pack(const void *in, int count, void *out, int size, int &pos, const Comm &comm) const {
    detail::check_on(comm, MPI_Pack(in, count, h, out, size, &pos, comm));
}
inline void Datatype::Unpack(const void *in, int size, void *out, int count, int &pos, const Comm &comm) const {
    detail::check_on(comm, MPI_Unpack(in, size, &pos, out, count, h, comm));
}

/* ---------------------------------------------------------------- callbacks */

namespace detail {
/* Keyval callbacks: the C keyval's extra state points at this. */
template <class Obj> struct Keyval {
    typename Obj::Copy_attr_function *copy;
    typename Obj::Delete_attr_function *del;
    void *extra;
};
template <class Obj, class Handle> int copy_trampoline(Handle old, int k, void *extra, void *in, void *out, int *flag) {
    Keyval<Obj> *kv = (Keyval<Obj> *)extra;
    bool f = false;
    int rc = kv->copy ? kv->copy(Obj(old), k, kv->extra, in, out, f) : MPI_SUCCESS;
    *flag = f;
    return rc;
}
template <class Obj, class Handle> int delete_trampoline(Handle h, int k, void *v, void *extra) {
    Keyval<Obj> *kv = (Keyval<Obj> *)extra;
    Obj o(h);
    return kv->del ? kv->del(o, k, v, kv->extra) : MPI_SUCCESS;
}

/* Error handler functions get no handler: one trampoline per slot. */
const int EH_SLOTS = 32;
inline Comm::Errhandler_function **eh_slots() {
    static Comm::Errhandler_function *slots[EH_SLOTS];
    return slots;
}
template <int N> void eh_trampoline(MPI_Comm *c, int *code, ...) {
    Intracomm comm(*c);
    eh_slots()[N](comm, code);
}
template <int N> struct EhTable {
    static void fill(MPI_Comm_errhandler_function **t) {
        t[N - 1] = eh_trampoline<N - 1>;
        EhTable<N - 1>::fill(t);
    }
};
template <> struct EhTable<0> {
    static void fill(MPI_Comm_errhandler_function **) {}
};
} // namespace detail

inline int Comm::Create_keyval(Copy_attr_function *copy, Delete_attr_function *del, void *extra) {
    detail::Keyval<Comm> *kv = new detail::Keyval<Comm>;
    kv->copy = copy == NULL_COPY_FN ? 0 : copy;
    kv->del = del == NULL_DELETE_FN ? 0 : del;
    kv->extra = extra;
    int k = MPI_KEYVAL_INVALID;
    detail::check(MPI_Comm_create_keyval(
        copy == NULL_COPY_FN ? MPI_COMM_NULL_COPY_FN : detail::copy_trampoline<Comm, MPI_Comm>,
        del == NULL_DELETE_FN ? MPI_COMM_NULL_DELETE_FN : detail::delete_trampoline<Comm, MPI_Comm>, &k, kv));
    return k;
}

inline int Datatype::Create_keyval(Copy_attr_function *copy, Delete_attr_function *del, void *extra) {
    detail::Keyval<Datatype> *kv = new detail::Keyval<Datatype>;
    kv->copy = copy == NULL_COPY_FN ? 0 : copy;
    kv->del = del == NULL_DELETE_FN ? 0 : del;
    kv->extra = extra;
    int k = MPI_KEYVAL_INVALID;
    detail::check(MPI_Type_create_keyval(
        copy == NULL_COPY_FN ? MPI_TYPE_NULL_COPY_FN : detail::copy_trampoline<Datatype, MPI_Datatype>,
        del == NULL_DELETE_FN ? MPI_TYPE_NULL_DELETE_FN : detail::delete_trampoline<Datatype, MPI_Datatype>, &k,
        kv));
    return k;
}

inline Errhandler Comm::Create_errhandler(Errhandler_function *f) {
    Comm::Errhandler_function **slots = detail::eh_slots();
    for (int i = 0; i < detail::EH_SLOTS; i++) {
        if (slots[i] == 0 || slots[i] == f) {
            MPI_Comm_errhandler_function *tr[detail::EH_SLOTS];
            detail::EhTable<detail::EH_SLOTS>::fill(tr);
            slots[i] = f;
            MPI_Errhandler e;
            detail::check(MPI_Comm_create_errhandler(tr[i], &e));
            return e;
        }
    }
    fprintf(stderr, "MPI::Comm::Create_errhandler: more than %d error handler functions are not supported\n",
            detail::EH_SLOTS);
    abort();
}

/* ---------------------------------------------------------------- Win (partial) */

class Win {
  public:
    typedef int Copy_attr_function(const Win &, int, void *, void *, void *, bool &);
    typedef int Delete_attr_function(Win &, int, void *, void *);
    SMPI_CXX_CONSTEXPR Win() : h(MPI_WIN_NULL) {}
    SMPI_CXX_CONSTEXPR Win(MPI_Win w) : h(w) {}
    operator MPI_Win() const { return h; }
    static Win Create(const void *base, Aint size, int disp, const Info &info, const Intracomm &comm) {
        MPI_Win w;
        detail::check_on(comm, MPI_Win_create((void *)base, size, disp, info, comm, &w));
        return w;
    }
    void Free() { detail::check(MPI_Win_free(&h)); }
    void Fence(int assert_) const { detail::check(MPI_Win_fence(assert_, h)); }
    void Put(const void *b, int n, const Datatype &dt, int target, Aint disp, int tn, const Datatype &tdt) const {
        detail::check(MPI_Put(b, n, dt, target, disp, tn, tdt, h));
    }
    void Get(void *b, int n, const Datatype &dt, int target, Aint disp, int tn, const Datatype &tdt) const {
        detail::check(MPI_Get(b, n, dt, target, disp, tn, tdt, h));
    }
    void Accumulate(const void *b, int n, const Datatype &dt, int target, Aint disp, int tn, const Datatype &tdt,
                    const Op &op) const {
        detail::check(MPI_Accumulate(b, n, dt, target, disp, tn, tdt, op, h));
    }
    void Set_attr(int k, const void *v) const { detail::check(MPI_Win_set_attr(h, k, (void *)v)); }
    bool Get_attr(int k, void *v) const { int f = 0; detail::check(MPI_Win_get_attr(h, k, v, &f)); return f != 0; }
    void Delete_attr(int k) const { detail::check(MPI_Win_delete_attr(h, k)); }
    static inline int Create_keyval(Copy_attr_function *copy, Delete_attr_function *del, void *extra) {
        detail::Keyval<Win> *kv = new detail::Keyval<Win>;
        kv->copy = copy == NULL_COPY_FN ? 0 : copy;
        kv->del = del == NULL_DELETE_FN ? 0 : del;
        kv->extra = extra;
        int k = MPI_KEYVAL_INVALID;
        detail::check(MPI_Win_create_keyval(
            copy == NULL_COPY_FN ? MPI_WIN_NULL_COPY_FN : detail::copy_trampoline<Win, MPI_Win>,
            del == NULL_DELETE_FN ? MPI_WIN_NULL_DELETE_FN : detail::delete_trampoline<Win, MPI_Win>, &k, kv));
        return k;
    }
    static void Free_keyval(int &k) { detail::check(MPI_Win_free_keyval(&k)); }
    static int NULL_COPY_FN(const Win &, int, void *, void *, void *, bool &f) { f = false; return MPI_SUCCESS; }
    static int DUP_FN(const Win &, int, void *, void *in, void *out, bool &f) {
        *(void **)out = in;
        f = true;
        return MPI_SUCCESS;
    }
    static int NULL_DELETE_FN(Win &, int, void *, void *) { return MPI_SUCCESS; }

  protected:
    MPI_Win h;
};

/* ---------------------------------------------------------------- File (partial) */

/* Only the error handler: MPICH's C++ test helper sets one on MPI::FILE_NULL
 * when the MPI has MPI-IO. File access goes through the C API. */
class File {
  public:
    SMPI_CXX_CONSTEXPR File() : h(MPI_FILE_NULL) {}
    SMPI_CXX_CONSTEXPR File(MPI_File f) : h(f) {}
    operator MPI_File() const { return h; }
    void Set_errhandler(const Errhandler &e) const { detail::check(MPI_File_set_errhandler(h, e)); }
    Errhandler Get_errhandler() const {
        MPI_Errhandler e;
        detail::check(MPI_File_get_errhandler(h, &e));
        return e == detail::throw_handler() ? Errhandler(detail::THROW_SENTINEL) : Errhandler(e);
    }

  protected:
    MPI_File h;
};

/* ---------------------------------------------------------------- constants */

SMPI_CXX_CONST Datatype CHAR(MPI_CHAR);
SMPI_CXX_CONST Datatype SIGNED_CHAR(MPI_SIGNED_CHAR);
SMPI_CXX_CONST Datatype UNSIGNED_CHAR(MPI_UNSIGNED_CHAR);
SMPI_CXX_CONST Datatype BYTE(MPI_BYTE);
SMPI_CXX_CONST Datatype SHORT(MPI_SHORT);
SMPI_CXX_CONST Datatype UNSIGNED_SHORT(MPI_UNSIGNED_SHORT);
SMPI_CXX_CONST Datatype INT(MPI_INT);
SMPI_CXX_CONST Datatype UNSIGNED(MPI_UNSIGNED);
SMPI_CXX_CONST Datatype LONG(MPI_LONG);
SMPI_CXX_CONST Datatype UNSIGNED_LONG(MPI_UNSIGNED_LONG);
SMPI_CXX_CONST Datatype LONG_LONG_INT(MPI_LONG_LONG_INT);
SMPI_CXX_CONST Datatype LONG_LONG(MPI_LONG_LONG);
SMPI_CXX_CONST Datatype UNSIGNED_LONG_LONG(MPI_UNSIGNED_LONG_LONG);
SMPI_CXX_CONST Datatype FLOAT(MPI_FLOAT);
SMPI_CXX_CONST Datatype DOUBLE(MPI_DOUBLE);
SMPI_CXX_CONST Datatype LONG_DOUBLE(MPI_LONG_DOUBLE);
SMPI_CXX_CONST Datatype WCHAR(MPI_WCHAR);
SMPI_CXX_CONST Datatype PACKED(MPI_PACKED);
SMPI_CXX_CONST Datatype FLOAT_INT(MPI_FLOAT_INT);
SMPI_CXX_CONST Datatype DOUBLE_INT(MPI_DOUBLE_INT);
SMPI_CXX_CONST Datatype LONG_INT(MPI_LONG_INT);
SMPI_CXX_CONST Datatype TWOINT(MPI_2INT);
SMPI_CXX_CONST Datatype SHORT_INT(MPI_SHORT_INT);
SMPI_CXX_CONST Datatype LONG_DOUBLE_INT(MPI_LONG_DOUBLE_INT);
SMPI_CXX_CONST Datatype UB(MPI_UB);
SMPI_CXX_CONST Datatype LB(MPI_LB);
SMPI_CXX_CONST Datatype INTEGER(MPI_INTEGER);
SMPI_CXX_CONST Datatype REAL(MPI_REAL);
SMPI_CXX_CONST Datatype DOUBLE_PRECISION(MPI_DOUBLE_PRECISION);
SMPI_CXX_CONST Datatype LOGICAL(MPI_LOGICAL);
SMPI_CXX_CONST Datatype CHARACTER(MPI_CHARACTER);
SMPI_CXX_CONST Datatype F_COMPLEX(MPI_COMPLEX);
SMPI_CXX_CONST Datatype F_DOUBLE_COMPLEX(MPI_DOUBLE_COMPLEX);
SMPI_CXX_CONST Datatype TWOINTEGER(MPI_2INTEGER);
SMPI_CXX_CONST Datatype TWOREAL(MPI_2REAL);
SMPI_CXX_CONST Datatype TWODOUBLE_PRECISION(MPI_2DOUBLE_PRECISION);
SMPI_CXX_CONST Datatype BOOL(MPI_CXX_BOOL);
SMPI_CXX_CONST Datatype COMPLEX(MPI_CXX_FLOAT_COMPLEX);
SMPI_CXX_CONST Datatype DOUBLE_COMPLEX(MPI_CXX_DOUBLE_COMPLEX);
SMPI_CXX_CONST Datatype LONG_DOUBLE_COMPLEX(MPI_CXX_LONG_DOUBLE_COMPLEX);
SMPI_CXX_CONST Datatype INTEGER1(MPI_INTEGER1);
SMPI_CXX_CONST Datatype INTEGER2(MPI_INTEGER2);
SMPI_CXX_CONST Datatype INTEGER4(MPI_INTEGER4);
SMPI_CXX_CONST Datatype INTEGER8(MPI_INTEGER8);
SMPI_CXX_CONST Datatype INTEGER16(MPI_INTEGER16);
SMPI_CXX_CONST Datatype REAL4(MPI_REAL4);
SMPI_CXX_CONST Datatype REAL8(MPI_REAL8);
SMPI_CXX_CONST Datatype REAL16(MPI_REAL16);
SMPI_CXX_CONST Datatype COMPLEX8(MPI_COMPLEX8);
SMPI_CXX_CONST Datatype COMPLEX16(MPI_COMPLEX16);
SMPI_CXX_CONST Datatype COMPLEX32(MPI_COMPLEX32);
SMPI_CXX_CONST Datatype AINT(MPI_AINT);
SMPI_CXX_CONST Datatype OFFSET(MPI_OFFSET);
SMPI_CXX_CONST Datatype COUNT(MPI_COUNT);
SMPI_CXX_CONST Datatype INT8_T(MPI_INT8_T);
SMPI_CXX_CONST Datatype INT16_T(MPI_INT16_T);
SMPI_CXX_CONST Datatype INT32_T(MPI_INT32_T);
SMPI_CXX_CONST Datatype INT64_T(MPI_INT64_T);
SMPI_CXX_CONST Datatype UINT8_T(MPI_UINT8_T);
SMPI_CXX_CONST Datatype UINT16_T(MPI_UINT16_T);
SMPI_CXX_CONST Datatype UINT32_T(MPI_UINT32_T);
SMPI_CXX_CONST Datatype UINT64_T(MPI_UINT64_T);
SMPI_CXX_CONST Datatype C_BOOL(MPI_C_BOOL);
SMPI_CXX_CONST Datatype C_COMPLEX(MPI_C_COMPLEX);
SMPI_CXX_CONST Datatype C_FLOAT_COMPLEX(MPI_C_FLOAT_COMPLEX);
SMPI_CXX_CONST Datatype C_DOUBLE_COMPLEX(MPI_C_DOUBLE_COMPLEX);
SMPI_CXX_CONST Datatype C_LONG_DOUBLE_COMPLEX(MPI_C_LONG_DOUBLE_COMPLEX);
SMPI_CXX_CONST Datatype DATATYPE_NULL(MPI_DATATYPE_NULL);
SMPI_CXX_CONST int SUCCESS = MPI_SUCCESS;
SMPI_CXX_CONST int ERR_BUFFER = MPI_ERR_BUFFER;
SMPI_CXX_CONST int ERR_COUNT = MPI_ERR_COUNT;
SMPI_CXX_CONST int ERR_TYPE = MPI_ERR_TYPE;
SMPI_CXX_CONST int ERR_TAG = MPI_ERR_TAG;
SMPI_CXX_CONST int ERR_COMM = MPI_ERR_COMM;
SMPI_CXX_CONST int ERR_RANK = MPI_ERR_RANK;
SMPI_CXX_CONST int ERR_REQUEST = MPI_ERR_REQUEST;
SMPI_CXX_CONST int ERR_ROOT = MPI_ERR_ROOT;
SMPI_CXX_CONST int ERR_GROUP = MPI_ERR_GROUP;
SMPI_CXX_CONST int ERR_OP = MPI_ERR_OP;
SMPI_CXX_CONST int ERR_TOPOLOGY = MPI_ERR_TOPOLOGY;
SMPI_CXX_CONST int ERR_DIMS = MPI_ERR_DIMS;
SMPI_CXX_CONST int ERR_ARG = MPI_ERR_ARG;
SMPI_CXX_CONST int ERR_UNKNOWN = MPI_ERR_UNKNOWN;
SMPI_CXX_CONST int ERR_TRUNCATE = MPI_ERR_TRUNCATE;
SMPI_CXX_CONST int ERR_OTHER = MPI_ERR_OTHER;
SMPI_CXX_CONST int ERR_INTERN = MPI_ERR_INTERN;
SMPI_CXX_CONST int ERR_IN_STATUS = MPI_ERR_IN_STATUS;
SMPI_CXX_CONST int ERR_PENDING = MPI_ERR_PENDING;
SMPI_CXX_CONST int ERR_KEYVAL = MPI_ERR_KEYVAL;
SMPI_CXX_CONST int ERR_NO_MEM = MPI_ERR_NO_MEM;
SMPI_CXX_CONST int ERR_INFO = MPI_ERR_INFO;
SMPI_CXX_CONST int ERR_INFO_KEY = MPI_ERR_INFO_KEY;
SMPI_CXX_CONST int ERR_INFO_VALUE = MPI_ERR_INFO_VALUE;
SMPI_CXX_CONST int ERR_INFO_NOKEY = MPI_ERR_INFO_NOKEY;
SMPI_CXX_CONST int ERR_WIN = MPI_ERR_WIN;
SMPI_CXX_CONST int ERR_BASE = MPI_ERR_BASE;
SMPI_CXX_CONST int ERR_SIZE = MPI_ERR_SIZE;
SMPI_CXX_CONST int ERR_DISP = MPI_ERR_DISP;
SMPI_CXX_CONST int ERR_LOCKTYPE = MPI_ERR_LOCKTYPE;
SMPI_CXX_CONST int ERR_ASSERT = MPI_ERR_ASSERT;
SMPI_CXX_CONST int ERR_RMA_CONFLICT = MPI_ERR_RMA_CONFLICT;
SMPI_CXX_CONST int ERR_RMA_SYNC = MPI_ERR_RMA_SYNC;
SMPI_CXX_CONST int ERR_LASTCODE = MPI_ERR_LASTCODE;
SMPI_CXX_CONST int ERR_UNSUPPORTED_OPERATION = MPI_ERR_UNSUPPORTED_OPERATION;
SMPI_CXX_CONST int ANY_SOURCE = MPI_ANY_SOURCE;
SMPI_CXX_CONST int ANY_TAG = MPI_ANY_TAG;
SMPI_CXX_CONST int PROC_NULL = MPI_PROC_NULL;
SMPI_CXX_CONST int ROOT = MPI_ROOT;
SMPI_CXX_CONST int UNDEFINED = MPI_UNDEFINED;
SMPI_CXX_CONST int KEYVAL_INVALID = MPI_KEYVAL_INVALID;
SMPI_CXX_CONST int BSEND_OVERHEAD = MPI_BSEND_OVERHEAD;
SMPI_CXX_CONST int MAX_PROCESSOR_NAME = MPI_MAX_PROCESSOR_NAME;
SMPI_CXX_CONST int MAX_ERROR_STRING = MPI_MAX_ERROR_STRING;
SMPI_CXX_CONST int MAX_OBJECT_NAME = MPI_MAX_OBJECT_NAME;
SMPI_CXX_CONST int MAX_INFO_KEY = MPI_MAX_INFO_KEY;
SMPI_CXX_CONST int MAX_INFO_VAL = MPI_MAX_INFO_VAL;
SMPI_CXX_CONST int MAX_LIBRARY_VERSION_STRING = MPI_MAX_LIBRARY_VERSION_STRING;
SMPI_CXX_CONST int IDENT = MPI_IDENT;
SMPI_CXX_CONST int CONGRUENT = MPI_CONGRUENT;
SMPI_CXX_CONST int SIMILAR = MPI_SIMILAR;
SMPI_CXX_CONST int UNEQUAL = MPI_UNEQUAL;
SMPI_CXX_CONST int TAG_UB = MPI_TAG_UB;
SMPI_CXX_CONST int HOST = MPI_HOST;
SMPI_CXX_CONST int IO = MPI_IO;
SMPI_CXX_CONST int WTIME_IS_GLOBAL = MPI_WTIME_IS_GLOBAL;
SMPI_CXX_CONST int UNIVERSE_SIZE = MPI_UNIVERSE_SIZE;
SMPI_CXX_CONST int APPNUM = MPI_APPNUM;
SMPI_CXX_CONST int LASTUSEDCODE = MPI_LASTUSEDCODE;
SMPI_CXX_CONST int GRAPH = MPI_GRAPH;
SMPI_CXX_CONST int CART = MPI_CART;
SMPI_CXX_CONST int DIST_GRAPH = MPI_DIST_GRAPH;
SMPI_CXX_CONST int THREAD_SINGLE = MPI_THREAD_SINGLE;
SMPI_CXX_CONST int THREAD_FUNNELED = MPI_THREAD_FUNNELED;
SMPI_CXX_CONST int THREAD_SERIALIZED = MPI_THREAD_SERIALIZED;
SMPI_CXX_CONST int THREAD_MULTIPLE = MPI_THREAD_MULTIPLE;
SMPI_CXX_CONST int COMBINER_NAMED = MPI_COMBINER_NAMED;
SMPI_CXX_CONST int COMBINER_DUP = MPI_COMBINER_DUP;
SMPI_CXX_CONST int COMBINER_CONTIGUOUS = MPI_COMBINER_CONTIGUOUS;
SMPI_CXX_CONST int COMBINER_VECTOR = MPI_COMBINER_VECTOR;
SMPI_CXX_CONST int COMBINER_HVECTOR = MPI_COMBINER_HVECTOR;
SMPI_CXX_CONST int COMBINER_INDEXED = MPI_COMBINER_INDEXED;
SMPI_CXX_CONST int COMBINER_HINDEXED = MPI_COMBINER_HINDEXED;
SMPI_CXX_CONST int COMBINER_INDEXED_BLOCK = MPI_COMBINER_INDEXED_BLOCK;
SMPI_CXX_CONST int COMBINER_STRUCT = MPI_COMBINER_STRUCT;
SMPI_CXX_CONST int COMBINER_SUBARRAY = MPI_COMBINER_SUBARRAY;
SMPI_CXX_CONST int COMBINER_RESIZED = MPI_COMBINER_RESIZED;
SMPI_CXX_CONST int COMBINER_HINDEXED_BLOCK = MPI_COMBINER_HINDEXED_BLOCK;
SMPI_CXX_CONST int COMBINER_DARRAY = MPI_COMBINER_DARRAY;
SMPI_CXX_CONST int COMBINER_F90_REAL = MPI_COMBINER_F90_REAL;
SMPI_CXX_CONST int COMBINER_F90_COMPLEX = MPI_COMBINER_F90_COMPLEX;
SMPI_CXX_CONST int COMBINER_F90_INTEGER = MPI_COMBINER_F90_INTEGER;
SMPI_CXX_CONST int COMBINER_HVECTOR_INTEGER = MPI_COMBINER_HVECTOR_INTEGER;
SMPI_CXX_CONST int COMBINER_HINDEXED_INTEGER = MPI_COMBINER_HINDEXED_INTEGER;
SMPI_CXX_CONST int COMBINER_STRUCT_INTEGER = MPI_COMBINER_STRUCT_INTEGER;
SMPI_CXX_CONST int ORDER_C = MPI_ORDER_C;
SMPI_CXX_CONST int ORDER_FORTRAN = MPI_ORDER_FORTRAN;
SMPI_CXX_CONST int DISTRIBUTE_NONE = MPI_DISTRIBUTE_NONE;
SMPI_CXX_CONST int DISTRIBUTE_BLOCK = MPI_DISTRIBUTE_BLOCK;
SMPI_CXX_CONST int DISTRIBUTE_CYCLIC = MPI_DISTRIBUTE_CYCLIC;
SMPI_CXX_CONST int DISTRIBUTE_DFLT_DARG = MPI_DISTRIBUTE_DFLT_DARG;
SMPI_CXX_CONST int TYPECLASS_REAL = MPI_TYPECLASS_REAL;
SMPI_CXX_CONST int TYPECLASS_INTEGER = MPI_TYPECLASS_INTEGER;
SMPI_CXX_CONST int TYPECLASS_COMPLEX = MPI_TYPECLASS_COMPLEX;
SMPI_CXX_CONST int LOCK_EXCLUSIVE = MPI_LOCK_EXCLUSIVE;
SMPI_CXX_CONST int LOCK_SHARED = MPI_LOCK_SHARED;
SMPI_CXX_CONST int MODE_NOCHECK = MPI_MODE_NOCHECK;
SMPI_CXX_CONST int MODE_NOSTORE = MPI_MODE_NOSTORE;
SMPI_CXX_CONST int MODE_NOPUT = MPI_MODE_NOPUT;
SMPI_CXX_CONST int MODE_NOPRECEDE = MPI_MODE_NOPRECEDE;
SMPI_CXX_CONST int MODE_NOSUCCEED = MPI_MODE_NOSUCCEED;
SMPI_CXX_CONST int WIN_BASE = MPI_WIN_BASE;
SMPI_CXX_CONST int WIN_SIZE = MPI_WIN_SIZE;
SMPI_CXX_CONST int WIN_DISP_UNIT = MPI_WIN_DISP_UNIT;
SMPI_CXX_CONST Op MAX(MPI_MAX);
SMPI_CXX_CONST Op MIN(MPI_MIN);
SMPI_CXX_CONST Op SUM(MPI_SUM);
SMPI_CXX_CONST Op PROD(MPI_PROD);
SMPI_CXX_CONST Op LAND(MPI_LAND);
SMPI_CXX_CONST Op BAND(MPI_BAND);
SMPI_CXX_CONST Op LOR(MPI_LOR);
SMPI_CXX_CONST Op BOR(MPI_BOR);
SMPI_CXX_CONST Op LXOR(MPI_LXOR);
SMPI_CXX_CONST Op BXOR(MPI_BXOR);
SMPI_CXX_CONST Op MAXLOC(MPI_MAXLOC);
SMPI_CXX_CONST Op MINLOC(MPI_MINLOC);
SMPI_CXX_CONST Op REPLACE(MPI_REPLACE);
SMPI_CXX_CONST Op NO_OP(MPI_NO_OP);
SMPI_CXX_CONST Op OP_NULL(MPI_OP_NULL);
SMPI_CXX_CONST Comm COMM_NULL(MPI_COMM_NULL);
SMPI_CXX_CONST Intracomm COMM_WORLD(MPI_COMM_WORLD);
SMPI_CXX_CONST Intracomm COMM_SELF(MPI_COMM_SELF);
SMPI_CXX_CONST Group GROUP_NULL(MPI_GROUP_NULL);
SMPI_CXX_CONST Group GROUP_EMPTY(MPI_GROUP_EMPTY);
SMPI_CXX_CONST Info INFO_NULL(MPI_INFO_NULL);
SMPI_CXX_CONST Request REQUEST_NULL(MPI_REQUEST_NULL);
SMPI_CXX_CONST Win WIN_NULL(MPI_WIN_NULL);
SMPI_CXX_CONST File FILE_NULL(MPI_FILE_NULL);
SMPI_CXX_CONST Errhandler ERRHANDLER_NULL(MPI_ERRHANDLER_NULL);
SMPI_CXX_CONST Errhandler ERRORS_ARE_FATAL(MPI_ERRORS_ARE_FATAL);
SMPI_CXX_CONST Errhandler ERRORS_RETURN(MPI_ERRORS_RETURN);
SMPI_CXX_CONST Errhandler ERRORS_THROW_EXCEPTIONS(detail::THROW_SENTINEL);
SMPI_CXX_CONST void *BOTTOM = MPI_BOTTOM;
SMPI_CXX_CONST void *IN_PLACE = MPI_IN_PLACE;
SMPI_CXX_CONST char **ARGV_NULL = 0;

/* ---------------------------------------------------------------- functions */

inline void Init() { detail::check(MPI_Init(0, 0)); }
inline void Init(int &argc, char **&argv) { detail::check(MPI_Init(&argc, &argv)); }
inline int Init_thread(int required) {
    int p = 0;
    detail::check(MPI_Init_thread(0, 0, required, &p));
    return p;
}
inline int Init_thread(int &argc, char **&argv, int required) {
    int p = 0;
    detail::check(MPI_Init_thread(&argc, &argv, required, &p));
    return p;
}
inline void Finalize() { detail::check(MPI_Finalize()); }
inline bool Is_initialized() { int f = 0; MPI_Initialized(&f); return f != 0; }
inline bool Is_finalized() { int f = 0; MPI_Finalized(&f); return f != 0; }
inline int Query_thread() { int p = 0; detail::check(MPI_Query_thread(&p)); return p; }
inline bool Is_thread_main() { int f = 0; detail::check(MPI_Is_thread_main(&f)); return f != 0; }
inline double Wtime() { return MPI_Wtime(); }
inline double Wtick() { return MPI_Wtick(); }
inline void Get_processor_name(char *name, int &len) { detail::check(MPI_Get_processor_name(name, &len)); }
inline void Get_version(int &v, int &sv) { detail::check(MPI_Get_version(&v, &sv)); }
inline int Get_error_class(int code) { int c = 0; detail::check(MPI_Error_class(code, &c)); return c; }
inline void Get_error_string(int code, char *s, int &len) { detail::check(MPI_Error_string(code, s, &len)); }
inline int Add_error_class() { int c = 0; detail::check(MPI_Add_error_class(&c)); return c; }
inline int Add_error_code(int cls) { int c = 0; detail::check(MPI_Add_error_code(cls, &c)); return c; }
inline void Add_error_string(int code, const char *s) { detail::check(MPI_Add_error_string(code, s)); }
inline Aint Get_address(const void *p) { Aint a = 0; detail::check(MPI_Get_address(p, &a)); return a; }
inline void Attach_buffer(void *b, int size) { detail::check(MPI_Buffer_attach(b, size)); }
inline int Detach_buffer(void *&b) { int size = 0; detail::check(MPI_Buffer_detach(&b, &size)); return size; }
inline void Compute_dims(int n, int nd, int dims[]) { detail::check(MPI_Dims_create(n, nd, dims)); }
inline void Pcontrol(const int level, ...) { MPI_Pcontrol(level); }
inline void *Alloc_mem(Aint size, const Info &info) {
    void *p = 0;
    detail::check(MPI_Alloc_mem(size, info, &p));
    return p;
}
inline void Free_mem(void *p) { detail::check(MPI_Free_mem(p)); }

} // namespace MPI

#endif /* SMPI_RS_MPICXX_H */
