--[[
GPU Estimator's submit-time check for SLURM (JobSubmitPlugins=lua). See README.md beside this file.

For a batch job that asks for GPUs (--gres=gpu[:TYPE][:N]), it finds the Python training script the
batch script runs, asks `gpu-estimate FILE --slurm` how much GPU memory that script needs, and
  * rejects the job, with the estimate in the message, when it does not fit the GPU type asked for;
  * gives a job that asked for an untyped GPU the smallest type it fits (--gres=gpu:TYPE:N);
  * lets every other job through unchanged. A job the estimator cannot judge (no script found, no
    estimate, a timeout, gpu-estimate missing) goes through with a note: our error never blocks a
    cluster.
Written for the Lua 5.1 that Debian's slurm-wlm links; it runs inside slurmctld, so it only reads
the script (the estimator never runs it) and only a script owned by the submitting user.
]]

-- Settings; gpu_estimate.conf beside this file (key = value lines) overrides them.
local conf = {
  -- The command, as the controller's shell runs it: `gpu-estimate` on the PATH after
  -- `npm install --global`, or `/usr/bin/node /opt/gpu-estimator/dist/cli.js`.
  command = "gpu-estimate",
  -- The cluster's GRES GPU types as TYPE=PROFILE pairs (`gpu-estimate --list-gpus` lists profiles).
  gpu_types = "t4=t4-16gb,a100=a100-40gb",
  -- Seconds one estimate may take before the job goes through unchecked.
  timeout = "60",
  -- "yes": reject jobs that do not fit; "no": only tell the user.
  enforce = "yes",
}

local function script_dir()
  local source = debug.getinfo(1, "S").source
  return source:sub(1, 1) == "@" and source:sub(2):match("^(.*)/[^/]*$") or "."
end

local function trim(text)
  return (text:gsub("^%s+", ""):gsub("%s+$", ""))
end

local function read_conf()
  local file = io.open(script_dir() .. "/gpu_estimate.conf", "r")
  if not file then return end
  for line in file:lines() do
    local key, value = line:match("^%s*([%w_]+)%s*=%s*(.-)%s*$")
    if key and conf[key] ~= nil and not line:match("^%s*#") then conf[key] = value end
  end
  file:close()
end

local function quote(text)
  return "'" .. text:gsub("'", "'\\''") .. "'"
end

-- Runs a shell command; returns its standard output and its exit code.
local function run(command)
  local handle = io.popen(command .. " 2>/dev/null; echo \"gpu-estimate-exit=$?\"", "r")
  if not handle then return "", -1 end
  local output = handle:read("*a") or ""
  handle:close()
  local code = tonumber(output:match("gpu%-estimate%-exit=(%d+)%s*$")) or -1
  return output:gsub("gpu%-estimate%-exit=%d+%s*$", ""), code
end

-- The GPUs a job asks for: tres_per_node such as "gres:gpu:a100:2", "gres:gpu:1", "gres/gpu=1".
local function requested_gpus(tres)
  if not tres then return nil end
  for spec in tostring(tres):gmatch("[^,]+") do
    local rest = spec:match("^gres[:/]gpu(.*)$")
    if rest then
      local gpu_type, count = rest:match("^:([%a_][%w_.%-]*)[:=]?(%d*)$")
      if not gpu_type then count = rest:match("^[:=]?(%d*)$") end
      if gpu_type or count then
        return { type = gpu_type, count = tonumber(count) or 1 }
      end
    end
  end
  return nil
end

-- The first .py file that a command line of the batch script runs (python, torchrun, accelerate, srun ...).
local function training_script(script, work_dir)
  if not script then return nil end
  for line in script:gmatch("[^\n]+") do
    if not line:match("^%s*#") and (line:match("python") or line:match("torchrun") or line:match("accelerate") or line:match("srun")) then
      for token in line:gmatch("[^%s'\";|&]+") do
        local file = token:match("^[%w_.%-/]*%.py$") or token:match("=([%w_.%-/]*%.py)$")
        if file then
          if file:sub(1, 1) ~= "/" and work_dir then file = work_dir .. "/" .. file end
          return file
        end
      end
    end
  end
  return nil
end

local function owner_uid(path)
  local output, code = run("stat -L -c %u " .. quote(path))
  if code ~= 0 then return nil end
  return tonumber(trim(output))
end

local function listed(list, item)
  for entry in (list or ""):gmatch("[^,]+") do
    if entry == item then return true end
  end
  return false
end

local function let_through(note)
  slurm.log_user("gpu-estimate: %s; submitted as requested", note)
  slurm.log_info("gpu-estimate: %s", note)
  return slurm.SUCCESS
end

function slurm_job_submit(job_desc, part_list, submit_uid)
  local gpus = requested_gpus(job_desc.tres_per_node)
  if not gpus then return slurm.SUCCESS end
  read_conf()
  local script = training_script(job_desc.script, job_desc.work_dir)
  if not script then return let_through("no Python training script found in the batch script, not checked") end
  local uid = owner_uid(script)
  if uid == nil then return let_through("cannot read " .. script .. ", not checked") end
  if uid ~= submit_uid then return let_through(script .. " is not the submitting user's file, not checked") end

  local output, code = run("timeout " .. (tonumber(conf.timeout) or 60) .. " " .. conf.command .. " " .. quote(script) .. " --slurm --gpu-types " .. quote(conf.gpu_types))
  local status, choice, fits, tight, mib = output:match("# gpu%-estimate%-result: status=(%a+) choice=(%S*) fits=(%S*) tight=(%S*) estimateMiB=(%S*)")
  if code ~= 0 or not status then return let_through("the estimate failed (exit " .. code .. "), not checked") end
  local summary = trim(output:match("# gpu%-estimate: ([^\n]*)") or "")
  if status == "unknown" then return let_through(summary) end

  if gpus.type then
    if listed(fits, gpus.type) then return slurm.SUCCESS end
    if listed(tight, gpus.type) then
      slurm.log_user("gpu-estimate: %s; it fits gpu:%s only within the safety margin", summary, gpus.type)
      return slurm.SUCCESS
    end
    if not listed(conf.gpu_types:gsub("=[^,]*", ""), gpus.type) then return let_through("GPU type " .. gpus.type .. " is not in gpu_types, not checked") end
    local advice = choice ~= "" and ("; ask for --gres=gpu:" .. choice .. ":" .. gpus.count) or "; it fits no GPU type of this cluster"
    if conf.enforce ~= "yes" then
      slurm.log_user("gpu-estimate: %s: does not fit gpu:%s%s", summary, gpus.type, advice)
      return slurm.SUCCESS
    end
    slurm.log_user("gpu-estimate: rejected: %s: does not fit gpu:%s (%s MiB estimated)%s", summary, gpus.type, mib, advice)
    return slurm.ERROR
  end

  if choice == "" then
    if conf.enforce ~= "yes" then
      slurm.log_user("gpu-estimate: %s: it fits no GPU type of this cluster", summary)
      return slurm.SUCCESS
    end
    slurm.log_user("gpu-estimate: rejected: %s: it fits no GPU type of this cluster (%s MiB estimated)", summary, mib)
    return slurm.ERROR
  end
  job_desc.tres_per_node = "gres:gpu:" .. choice .. ":" .. gpus.count
  slurm.log_user("gpu-estimate: %s; given --gres=gpu:%s:%d", summary, choice, gpus.count)
  slurm.log_info("gpu-estimate: uid %d: %s -> gres:gpu:%s:%d", submit_uid, script, choice, gpus.count)
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end

return slurm.SUCCESS
