"""The seccomp filter of the bwrap sandbox: a classic-BPF program, written by hand, that bwrap loads
(`--seccomp FD`) right before it starts the shell.

It denies, with EPERM, system calls that reach past the sandbox or into the kernel and that no build
or test needs: tracing other processes, kernel keyrings, BPF, perf, io_uring, modules, kexec,
mounts, swap, reboot, the clock, new namespaces (`unshare`, `setns`, and `clone` with a namespace
flag; `clone3`, whose flags a filter cannot read, answers ENOSYS so that libc falls back to
`clone`), and the TIOCSTI ioctl that types into a terminal. A system call of another ABI than the
native one (i386 or arm32 compat: the process is killed; x32: EPERM) never runs. Everything else is
allowed.
"""

from __future__ import annotations

import errno
import os
import platform
import struct

# Classic BPF opcodes (linux/bpf_common.h) and seccomp return values (linux/seccomp.h).
LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
RET = 0x06  # BPF_RET | BPF_K
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000

# Offsets in struct seccomp_data {int nr; u32 arch; u64 instruction_pointer; u64 args[6]}; an
# argument's low 32 bits come first on these little-endian architectures.
NR, ARCH = 0, 4


def arg_low(index: int) -> int:
    return 16 + 8 * index


AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
X32_SYSCALL_BIT = 0x40000000
TIOCSTI = 0x5412
# CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET
CLONE_NEW_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

DENIED = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "process_madvise",
    "pidfd_getfd",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "open_by_handle_at",
    "name_to_handle_at",
    "mount",
    "umount2",
    "pivot_root",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "swapon",
    "swapoff",
    "reboot",
    "syslog",
    "acct",
    "settimeofday",
    "clock_settime",
    "adjtimex",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "unshare",
    "setns",
)

# System call numbers: arch/x86/entry/syscalls/syscall_64.tbl and include/uapi/asm-generic/unistd.h.
SYSCALLS = {
    AUDIT_ARCH_X86_64: {
        "ioctl": 16,
        "clone": 56,
        "clone3": 435,
        "ptrace": 101,
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "process_madvise": 440,
        "pidfd_getfd": 438,
        "keyctl": 250,
        "add_key": 248,
        "request_key": 249,
        "bpf": 321,
        "perf_event_open": 298,
        "userfaultfd": 323,
        "kexec_load": 246,
        "kexec_file_load": 320,
        "init_module": 175,
        "finit_module": 313,
        "delete_module": 176,
        "open_by_handle_at": 304,
        "name_to_handle_at": 303,
        "mount": 165,
        "umount2": 166,
        "pivot_root": 155,
        "fsopen": 430,
        "fsconfig": 431,
        "fsmount": 432,
        "fspick": 433,
        "move_mount": 429,
        "open_tree": 428,
        "mount_setattr": 442,
        "swapon": 167,
        "swapoff": 168,
        "reboot": 169,
        "syslog": 103,
        "acct": 163,
        "settimeofday": 164,
        "clock_settime": 227,
        "adjtimex": 159,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "unshare": 272,
        "setns": 308,
    },
    AUDIT_ARCH_AARCH64: {
        "ioctl": 29,
        "clone": 220,
        "clone3": 435,
        "ptrace": 117,
        "process_vm_readv": 270,
        "process_vm_writev": 271,
        "process_madvise": 440,
        "pidfd_getfd": 438,
        "keyctl": 219,
        "add_key": 217,
        "request_key": 218,
        "bpf": 280,
        "perf_event_open": 241,
        "userfaultfd": 282,
        "kexec_load": 104,
        "kexec_file_load": 294,
        "init_module": 105,
        "finit_module": 273,
        "delete_module": 106,
        "open_by_handle_at": 265,
        "name_to_handle_at": 264,
        "mount": 40,
        "umount2": 39,
        "pivot_root": 41,
        "fsopen": 430,
        "fsconfig": 431,
        "fsmount": 432,
        "fspick": 433,
        "move_mount": 429,
        "open_tree": 428,
        "mount_setattr": 442,
        "swapon": 224,
        "swapoff": 225,
        "reboot": 142,
        "syslog": 116,
        "acct": 89,
        "settimeofday": 170,
        "clock_settime": 112,
        "adjtimex": 171,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "unshare": 97,
        "setns": 268,
    },
}
MACHINES = {"x86_64": AUDIT_ARCH_X86_64, "aarch64": AUDIT_ARCH_AARCH64}  # platform.machine() on Linux


def native_arch() -> int | None:
    """The AUDIT_ARCH_* of this machine's 64-bit ABI, None where there is no filter for it."""
    if struct.calcsize("P") != 8:
        return None
    return MACHINES.get(platform.machine())


def program(arch: int) -> bytes:
    """The filter for `arch` (an AUDIT_ARCH_* value), as the bytes of a `struct sock_filter` array."""
    nrs = SYSCALLS[arch]
    # Each entry: (code, jump-if-true, jump-if-false, k); a jump is a label resolved below.
    code: list[tuple[int, int | str, int | str, int]] = [
        (LD_W_ABS, 0, 0, ARCH),
        (JEQ, 0, "kill", arch),
        (LD_W_ABS, 0, 0, NR),
    ]
    if arch == AUDIT_ARCH_X86_64:
        code.append((JGE, "eperm", 0, X32_SYSCALL_BIT))
    code += [(JEQ, "eperm", 0, nrs[name]) for name in DENIED]
    code += [
        (JEQ, "ioctl", 0, nrs["ioctl"]),
        (JEQ, "clone", 0, nrs["clone"]),
        (JEQ, "enosys", 0, nrs["clone3"]),
        (RET, 0, 0, RET_ALLOW),
        "ioctl",
        (LD_W_ABS, 0, 0, arg_low(1)),
        (JEQ, "eperm", 0, TIOCSTI),
        (RET, 0, 0, RET_ALLOW),
        "clone",
        (LD_W_ABS, 0, 0, arg_low(0)),
        (JSET, "eperm", 0, CLONE_NEW_NAMESPACES),
        (RET, 0, 0, RET_ALLOW),
        "eperm",
        (RET, 0, 0, RET_ERRNO | errno.EPERM),
        "enosys",
        (RET, 0, 0, RET_ERRNO | errno.ENOSYS),
        "kill",
        (RET, 0, 0, RET_KILL_PROCESS),
    ]
    labels: dict[str, int] = {}
    instructions = []
    for item in code:
        if isinstance(item, str):
            labels[item] = len(instructions)
        else:
            instructions.append(item)

    def offset(target: int | str, pc: int) -> int:
        if isinstance(target, int):
            return target
        jump = labels[target] - pc - 1
        assert 0 <= jump <= 255, f"BPF jump to {target} out of range"
        return jump

    return b"".join(
        struct.pack("<HBBI", op, offset(jt, pc), offset(jf, pc), k) for pc, (op, jt, jf, k) in enumerate(instructions)
    )


def filter_fd() -> int | None:
    """A file descriptor, at offset 0, holding this machine's filter for `bwrap --seccomp`; the caller
    passes it to bwrap and closes it. None on an architecture without a filter here."""
    arch = native_arch()
    if arch is None:
        return None
    fd = os.memfd_create("agentcli-seccomp")
    os.write(fd, program(arch))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
