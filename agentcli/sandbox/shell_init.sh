# Bootstrap of agentcli's persistent shell. The driver substitutes __AC_CTL__ and sends this on stdin.
# Each command runs in a subshell that is its own process group (job control is on), so a timeout
# kills the command and everything it started while this shell lives on. On exit the subshell saves
# its working directory, variables, functions and aliases, and this shell loads them: `cd`, `export`
# and `source venv/bin/activate` persist from one command to the next.
# Everything per command is done with builtins where possible: each fork+exec costs a millisecond.
set -m
__ac_ctl='__AC_CTL__'
export PAGER=cat GIT_PAGER=cat GIT_EDITOR=true EDITOR=true VISUAL=true TERM=dumb NO_COLOR=1 \
  DEBIAN_FRONTEND=noninteractive PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1 \
  GIT_TERMINAL_PROMPT=0
# A pipe nobody writes to: `read -t` on it is a sleep without starting a process.
exec {__ac_never}<> <(:)
# The driver writes a line to this FIFO when the user interrupts a command; without it, only timeouts stop one.
if [ -p "$__ac_ctl/interrupt" ]; then exec {__ac_intr}<>"$__ac_ctl/interrupt"; else __ac_intr=$__ac_never; fi

__ac_names() { # every variable name, without forking
  __ac_all=(${!_@} ${!a@} ${!b@} ${!c@} ${!d@} ${!e@} ${!f@} ${!g@} ${!h@} ${!i@} ${!j@} ${!k@} ${!l@} ${!m@}
    ${!n@} ${!o@} ${!p@} ${!q@} ${!r@} ${!s@} ${!t@} ${!u@} ${!v@} ${!w@} ${!x@} ${!y@} ${!z@}
    ${!A@} ${!B@} ${!C@} ${!D@} ${!E@} ${!F@} ${!G@} ${!H@} ${!I@} ${!J@} ${!K@} ${!L@} ${!M@}
    ${!N@} ${!O@} ${!P@} ${!Q@} ${!R@} ${!S@} ${!T@} ${!U@} ${!V@} ${!W@} ${!X@} ${!Y@} ${!Z@})
}
__ac_names
__ac_base=" ${__ac_all[*]} "

__ac_save() { # $1: state file
  local v exported=' '
  __ac_names
  {
    printf '[[ $PWD == %q ]] || builtin cd -- %q 2>/dev/null\n' "$PWD" "$PWD"
    for v in "${__ac_all[@]}"; do
      case "$v" in __ac_* | BASH* | FUNCNAME | PIPESTATUS | GROUPS | _ | COMP* | LINENO | RANDOM | SECONDS | SRANDOM | EPOCH* | SHLVL | PPID | UID | EUID | OLDPWD | PWD) continue ;; esac
      if [[ ${!v@a} == *x* ]]; then
        exported+="$v "
        declare -p "$v"
      elif [[ $__ac_base != *" $v "* && ${!v@a} != *r* ]]; then
        declare -p "$v"
      fi
    done 2>/dev/null
    printf '__ac_exported=%q\n' "$exported"
    declare -f
    alias -p
  } >"$1" 2>/dev/null
}

__ac_launch() { # $1: command id, $2: timeout in seconds (0: none)
  local cmd="$__ac_ctl/$1.sh" out="$__ac_ctl/$1.out"
  __ac_pid='' __ac_wd=''
  if ! bash -n "$cmd" >"$out" 2>&1; then
    : >"$__ac_ctl/$1.syntax"
    return 2
  fi
  (
    trap "__ac_save '$__ac_ctl/$1.state'" EXIT
    . "$cmd"
  ) </dev/null >>"$out" 2>&1 &
  __ac_pid=$!
  ( # the watchdog: a line on the interrupt FIFO sends SIGINT, the timeout SIGTERM; SIGKILL follows
    if [ "$2" != 0 ]; then read -t "$2" -u "$__ac_intr"; else read -u "$__ac_intr"; fi
    if [ $? = 0 ]; then
      kill -INT -- -"$__ac_pid"
    else
      : >"$__ac_ctl/$1.timeout"
      kill -TERM -- -"$__ac_pid"
    fi
    read -t 2 -u "$__ac_never"
    kill -KILL -- -"$__ac_pid"
  ) >/dev/null 2>&1 &
  __ac_wd=$!
}

__ac_after() { # stop the watchdog; the caller then loads the saved state at top level
  if [ -n "$__ac_wd" ]; then
    kill -KILL -- -"$__ac_wd" 2>/dev/null
    wait "$__ac_wd" 2>/dev/null
  fi
}

__ac_prune() { # unset exported variables the command unset (loading the saved state only adds)
  local v
  __ac_names
  for v in "${__ac_all[@]}"; do
    if [[ ${!v@a} == *x* && $__ac_exported != *" $v "* ]]; then
      case "$v" in __ac_* | SHLVL | OLDPWD | PWD) ;; *) unset "$v" ;; esac
    fi
  done
}
