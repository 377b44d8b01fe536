/*
 * shm_shim: SysV shared memory (shmget/shmat/shmdt/shmctl) on top of anonymous
 * MAP_SHARED mappings, for kernels built without CONFIG_SYSVIPC (the minimal lab
 * kernels). fio keeps its job table in a SysV segment created before it forks the
 * jobs; an anonymous shared mapping made before fork() is shared the same way.
 * Loaded with LD_PRELOAD for fio only, and only when /proc/sysvipc is missing.
 * Limits: IPC_PRIVATE-style use inside one process tree (all fio needs).
 */
#include <errno.h>
#include <stddef.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>

#define MAX_SEGMENTS 64
static struct { void *addr; size_t size; } seg[MAX_SEGMENTS];

int shmget(key_t key, size_t size, int flags)
{
	(void)key; (void)flags;
	for (int id = 0; id < MAX_SEGMENTS; id++) {
		if (seg[id].addr)
			continue;
		void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -1; /* errno from mmap */
		seg[id].addr = p;
		seg[id].size = size;
		return id;
	}
	errno = ENOSPC;
	return -1;
}

void *shmat(int id, const void *addr, int flags)
{
	(void)addr; (void)flags;
	if (id < 0 || id >= MAX_SEGMENTS || !seg[id].addr) {
		errno = EINVAL;
		return (void *)-1;
	}
	return seg[id].addr;
}

int shmdt(const void *addr)
{
	(void)addr; /* the mapping goes away with the process, or with IPC_RMID */
	return 0;
}

int shmctl(int id, int cmd, struct shmid_ds *buf)
{
	if (id < 0 || id >= MAX_SEGMENTS || !seg[id].addr) {
		errno = EINVAL;
		return -1;
	}
	if (cmd == IPC_STAT && buf) {
		buf->shm_segsz = seg[id].size;
		buf->shm_nattch = 1;
	}
	/* IPC_RMID: keep the mapping; fio removes the segment while still using it. */
	return 0;
}
