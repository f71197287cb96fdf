// bindings.cpp — MPI's deprecated C++ bindings (MPI::Init, MPI::COMM_WORLD,
// ...) through smpicxx's mpicxx.h.
//
// Demonstrates:
//  - point to point and collectives on MPI::COMM_WORLD, MPI::Status;
//  - a derived MPI::Datatype (vector), a user MPI::Op;
//  - Split into an MPI::Intracomm, Create_intercomm and Merge;
//  - MPI::ERRORS_THROW_EXCEPTIONS: an invalid rank throws MPI::Exception.
// Each rank prints one line; rank 0 prints OK last.
#include <mpi.h>

#include <cstdio>

static void absmax(const void *in, void *inout, int len, const MPI::Datatype &) {
    const int *a = static_cast<const int *>(in);
    int *b = static_cast<int *>(inout);
    for (int i = 0; i < len; i++) {
        int x = a[i] < 0 ? -a[i] : a[i], y = b[i] < 0 ? -b[i] : b[i];
        b[i] = x > y ? x : y;
    }
}

int main(int argc, char **argv) {
    MPI::Init(argc, argv);
    const int rank = MPI::COMM_WORLD.Get_rank(), size = MPI::COMM_WORLD.Get_size();

    // Ring exchange with a status.
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    MPI::Status st;
    MPI::COMM_WORLD.Sendrecv(&rank, 1, MPI::INT, right, 7, &got, 1, MPI::INT, left, 7, st);
    bool ring = got == left && st.Get_source() == left && st.Get_tag() == 7 && st.Get_count(MPI::INT) == 1;

    // A vector type: every other int of 6.
    MPI::Datatype every_other = MPI::INT.Create_vector(3, 1, 2);
    every_other.Commit();
    int buf[6] = {0, 0, 0, 0, 0, 0};
    if (rank == 0)
        for (int i = 0; i < 6; i++)
            buf[i] = 10 + i;
    MPI::COMM_WORLD.Bcast(buf, 1, every_other, 0);
    every_other.Free();
    // The gaps keep their values (the root filled all six).
    bool vec = buf[0] == 10 && buf[2] == 12 && buf[4] == 14 && buf[1] == (rank == 0 ? 11 : 0);

    // A user operation.
    MPI::Op op;
    op.Init(absmax, true);
    int mine = rank % 2 ? -rank : rank, big = 0;
    MPI::COMM_WORLD.Allreduce(&mine, &big, 1, MPI::INT, op);
    op.Free();

    // Two halves, an intercommunicator between them, merged back.
    MPI::Intracomm half = MPI::COMM_WORLD.Split(rank % 2, rank);
    MPI::Intercomm inter = half.Create_intercomm(0, MPI::COMM_WORLD, rank % 2 ? 0 : 1, 3);
    MPI::Intracomm merged = inter.Merge(rank % 2 == 1);
    bool comms = inter.Get_remote_size() + half.Get_size() == size && merged.Get_size() == size;
    merged.Free();
    inter.Free();
    half.Free();

    // Errors as exceptions.
    MPI::COMM_WORLD.Set_errhandler(MPI::ERRORS_THROW_EXCEPTIONS);
    int cls = -1;
    try {
        MPI::COMM_WORLD.Send(&rank, 1, MPI::INT, size, 0);
    } catch (MPI::Exception &e) {
        cls = e.Get_error_class();
    }

    std::printf("cxx bindings rank=%d ring=%d vector=%d absmax=%d comms=%d exception=%s\n", rank, ring, vec, big,
                comms, cls == MPI::ERR_RANK ? "MPI_ERR_RANK" : "none");
    MPI::COMM_WORLD.Barrier();
    if (rank == 0)
        std::printf("OK\n");
    MPI::Finalize();
    return 0;
}
