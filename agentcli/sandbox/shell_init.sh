# Bootstrap of agentcli's persistent shell. The driver substitutes the __AC_*__ names and sends this on stdin.
# Each command runs in a subshell that is its own process group (job control is on), so a timeout
# kills the command and everything it started while this shell lives on. On exit the subshell saves
# its working directory, variables, functions and aliases; this shell loads them only when they
# differ from what it has, so `cd`, `export` and `source venv/bin/activate` persist at little cost.
# Per command nothing is forked but the command's subshell: a fork costs about a millisecond, so
# the rest uses builtins, scratch files live on a tmpfs, and one long-lived watchdog enforces
# timeouts (a fresh watchdog per command would double the forks).
set -m
__ac_ctl=__AC_CTL__   # command scripts, outputs and markers, shared with the driver
__ac_tmp=__AC_TMP__   # this shell's scratch files (saved state): private, ideally on a tmpfs
__ac_fifo=__AC_FIFO__ # the watchdog's FIFO: this shell arms and disarms it, the driver sends interrupts
__ac_oom=__AC_OOM__   # 1: report kills by the container's OOM killer (its cgroup's oom_kill counter)
export PAGER=cat GIT_PAGER=cat GIT_EDITOR=true EDITOR=true VISUAL=true TERM=dumb NO_COLOR=1 \
  DEBIAN_FRONTEND=noninteractive PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1 \
  GIT_TERMINAL_PROMPT=0
[ -d "$__ac_tmp" ] || mkdir -p -m 700 -- "$__ac_tmp" 2>/dev/null || __ac_tmp=$__ac_ctl
if [ -p "$__ac_fifo" ]; then exec {__ac_wdfd}<>"$__ac_fifo"; else exec {__ac_wdfd}<> <(:); fi
# Variables the shell had at start are not carried between commands unless exported (the
# environment): the rest are bash's own. Nor are those bash sets as commands and functions run.
declare -A __ac_base
compgen -v >"$__ac_tmp/vars"
mapfile -t __ac_names <"$__ac_tmp/vars"
__ac_drop=(RANDOM SRANDOM SECONDS EPOCHREALTIME EPOCHSECONDS LINENO BASHPID BASH_COMMAND HISTCMD FUNCNAME
  BASH_LINENO BASH_SOURCE BASH_ARGV BASH_ARGC BASH_SUBSHELL BASH_REMATCH PIPESTATUS COPROC COPROC_PID _)
for __ac_v in "${__ac_names[@]}"; do
  __ac_base[$__ac_v]=1
  [[ ${!__ac_v@a} == *x* ]] || __ac_drop+=("$__ac_v")
done
__ac_state='' __ac_reload='' __ac_flags='' __ac_oomc=0 __ac_running=''
# A shell whose driver died outright gets SIGHUP where the backend arranges it (the host's): the
# command running goes with it, rather than finish unwatched (a resumed run redoes that step).
__ac_hup() { [ -z "$__ac_running" ] || builtin kill -KILL -- "-$__ac_running" 2>/dev/null; builtin exit 129; }
trap __ac_hup HUP

__ac_oom_count() { # sets __ac_oomn from the cgroup's "oom_kill N" line, in one read
  local text
  builtin read -r -d '' text <"$__ac_oom"
  text=${text##*oom_kill }
  __ac_oomn=${text%%[!0-9]*}
}
if [ "$__ac_oom" = 1 ]; then # cgroup v2 (a cgroup namespace), else v1 (the container's memory cgroup)
  __ac_oom=/sys/fs/cgroup/memory.events
  [ -r "$__ac_oom" ] || __ac_oom=/sys/fs/cgroup/memory/memory.oom_control
  [ -r "$__ac_oom" ] && __ac_oom_count && __ac_oomc=$__ac_oomn || __ac_oom=''
else
  __ac_oom=''
fi

__ac_wd_wait() { # $1: seconds (0: no limit). Status 0: "done" came; 1: time ran out; 2: "interrupt"; 3: "exit"
  local line
  while :; do
    if [ "$1" = 0 ]; then
      builtin read -r -u "$__ac_wdfd" line || return 1
    else
      builtin read -r -t "$1" -u "$__ac_wdfd" line || return 1
    fi
    case $line in done) return 0 ;; interrupt) return 2 ;; exit) return 3 ;; esac
  done
}

__ac_watchdog() { # one per shell: "arm PID SECONDS ID" starts a clock on a command's process group
  local verb pid secs cid
  while :; do
    if ! builtin read -r -t 2 -u "$__ac_wdfd" verb pid secs cid; then
      builtin kill -0 "$$" 2>/dev/null || exit 0 # the shell is gone, and with it the need for a watchdog
      continue
    fi
    case $verb in arm) ;; exit) exit 0 ;; *) continue ;; esac # (an interrupt after its command ended)
    __ac_wd_wait "$secs"
    case $? in
      0) continue ;;
      1) : >"$__ac_ctl/$cid.timeout"; builtin kill -TERM -- "-$pid" ;;
      2) : >"$__ac_ctl/$cid.interrupt"; builtin kill -INT -- "-$pid" ;;
      3) builtin kill -KILL -- "-$pid"; exit 0 ;; # the driver is closing or replacing this shell
    esac 2>/dev/null
    # A grace period, then SIGKILL for whatever ignored the first signal.
    __ac_wd_wait 2
    case $? in 0) continue ;; 3) builtin kill -KILL -- "-$pid" 2>/dev/null; exit 0 ;; esac
    builtin kill -KILL -- "-$pid" 2>/dev/null
    until __ac_wd_wait 0; do [ $? = 3 ] && exit 0; done
  done
}
__ac_watchdog </dev/null >/dev/null 2>&1 &
disown
unset -f __ac_watchdog __ac_wd_wait

__ac_save() { # runs in the command's subshell as it exits, so it may drop whatever it likes
  exec 9>"$__ac_tmp/state"
  # What is left is stable from one save to the next unless the command changed it: the
  # environment, the command's own variables, functions and aliases, and the working directory.
  unset -v "${__ac_drop[@]}" "${!__ac_@}" 2>/dev/null
  unset -f __ac_save __ac_pre __ac_post __ac_forget __ac_oom_count __ac_hup
  {
    printf '[[ $PWD == %q ]] || builtin cd -- %q 2>/dev/null\n' "$PWD" "$PWD"
    declare -p
    declare -f
    alias -p
    printf '#__ac_end\n' # a state cut short (a full disk, a kill) is never loaded
  } >&9 2>/dev/null
}

# The driver's line per command forks the subshell at top level, so the command sees no locals or
# arguments of these functions: __ac_pre ID CHECK && { ( trap __ac_save EXIT; . ID.sh ) ... & __ac_post ID SECONDS $!; }
__ac_pre() { # $1: command id, $2: 1 to check the syntax first
  __ac_ec=0 __ac_flags='' __ac_reload=''
  # A multi-line command with a syntax error would run up to the error: refuse it whole instead.
  # (A single line with an error never starts, so it needs no check.) A command that speaks of extglob
  # may turn it on before the lines that use it: that one is read with extglob on.
  if [ "$2" = 1 ]; then
    local text='' check=(bash -n)
    builtin read -r -d '' text <"$__ac_ctl/$1.sh"
    [[ $text == *extglob* ]] && check=(bash -O extglob -n)
    if ! "${check[@]}" "$__ac_ctl/$1.sh" >"$__ac_ctl/$1.out" 2>&1; then
      : >"$__ac_ctl/$1.syntax"
      __ac_ec=2
      return 1
    fi
  fi
  : >"$__ac_tmp/state"
}

__ac_post() { # $1: command id, $2: timeout in seconds (0: none), $3: the command's subshell
  local new
  builtin printf 'arm %s %s %s\n' "$3" "$2" "$1" >&"$__ac_wdfd"
  __ac_running=$3
  builtin wait "$3"
  __ac_ec=$? __ac_running=''

  builtin printf 'done\n' >&"$__ac_wdfd"
  # A stopped command must not leave behind background processes that ignored the signal.
  if [ -e "$__ac_ctl/$1.timeout" ] || [ -e "$__ac_ctl/$1.interrupt" ]; then
    builtin kill -KILL -- "-$3" 2>/dev/null
  fi
  if [ -n "$__ac_oom" ]; then
    __ac_oom_count
    [ "$__ac_oomn" = "$__ac_oomc" ] || __ac_oomc=$__ac_oomn __ac_flags=oom
  fi
  builtin read -r -d '' new <"$__ac_tmp/state"
  [[ $new == *'#__ac_end' && $new != "$__ac_state" ]] || return 0
  __ac_state=$new __ac_reload=1
  builtin printf '%s' "$new" >"$__ac_ctl/shell.state" 2>/dev/null # the host journals it, for a resume
}

__ac_forget() { # before a changed state loads: drop what the command may have removed
  compgen -v >"$__ac_tmp/vars"
  mapfile -t __ac_names <"$__ac_tmp/vars"
  for __ac_v in "${__ac_names[@]}"; do
    [[ $__ac_v == __ac_* || $__ac_v == SHLVL || ${!__ac_v@a} == *r* ]] && continue
    [[ -z ${__ac_base[$__ac_v]} || ${!__ac_v@a} == *x* ]] && unset "$__ac_v"
  done 2>/dev/null
  compgen -A function >"$__ac_tmp/vars"
  mapfile -t __ac_names <"$__ac_tmp/vars"
  for __ac_v in "${__ac_names[@]}"; do
    [[ $__ac_v == __ac_* ]] || unset -f "$__ac_v"
  done
  unalias -a
}
