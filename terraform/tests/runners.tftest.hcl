# The runners module: GPU task definition sharing the host's MPS daemon, the capacity provider
# and the instances.

mock_provider "aws" {
  override_during = plan

  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_data "aws_partition" {
    defaults = { partition = "aws" }
  }
  mock_data "aws_region" {
    defaults = { name = "us-east-1" }
  }
  mock_data "aws_ssm_parameter" {
    defaults = { value = "ami-0123456789abcdef0" }
  }
  mock_resource "aws_ecr_repository" {
    defaults = { repository_url = "123456789012.dkr.ecr.us-east-1.amazonaws.com/pf", arn = "arn:aws:ecr:us-east-1:123456789012:repository/pf" }
  }
  mock_resource "aws_ecs_cluster" {
    defaults = { name = "pf" }
  }
  mock_resource "aws_cloudwatch_log_group" {
    defaults = { name = "/ecs/pf", arn = "arn:aws:logs:us-east-1:123456789012:log-group:/ecs/pf" }
  }
  mock_resource "aws_iam_role" {
    defaults = { arn = "arn:aws:iam::123456789012:role/pf" }
  }
  mock_resource "aws_iam_instance_profile" {
    defaults = { arn = "arn:aws:iam::123456789012:instance-profile/pf" }
  }
  mock_resource "aws_autoscaling_group" {
    defaults = { arn = "arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:x:autoScalingGroupName/pf" }
  }
}

variables {
  name                                     = "pf"
  vpc_id                                   = "vpc-123"
  subnet_ids                               = ["subnet-1", "subnet-2"]
  instance_types                           = ["g6.xlarge", "g5.xlarge"]
  on_demand_base_capacity                  = 1
  on_demand_percentage_above_base_capacity = 25
  max_instances                            = 3
  stop_timeout_s                           = 40
  mps_dir                                  = "tests/fixtures/mps"
  mps_pipe_directory                       = "/run/pagefleet-mps"
  bucket_arn                               = "arn:aws:s3:::pf-bucket"
  chunks_queue_arn                         = "arn:aws:sqs:us-east-1:123456789012:pf-chunks"
  kms_key_arn                              = "arn:aws:kms:us-east-1:123456789012:key/test"
  image_tag                                = "0123456789ab"
  environment = {
    PAGEFLEET_CONVERTER = "marker"
    PAGEFLEET_WORKERS   = "3"
  }
}

run "runners" {
  command = plan

  module {
    source = "./modules/runners"
  }

  # rehearsal/iam.py holds the runner's tests to terraform/policies.json's runner role.
  assert {
    condition     = jsondecode(aws_iam_role_policy.task[0].policy) == jsondecode(file("policies.json")).roles.runner.policy
    error_message = "terraform/policies.json is stale: run `make terraform-policies-json`"
  }

  assert {
    condition = [aws_iam_role.instance[0].name, aws_iam_instance_profile.this[0].name, aws_iam_role.execution[0].name, aws_iam_role.task[0].name] == [
      "pf-us-east-1-instance", "pf-us-east-1-instance", "pf-us-east-1-execution", "pf-us-east-1-task"
    ]
    error_message = "IAM names, global to the account, carry the region: two regions' deployments of one name do not collide"
  }

  assert {
    condition = [for r in jsondecode(aws_ecr_lifecycle_policy.this[0].policy).rules : [r.rulePriority, r.selection.tagStatus, try(r.selection.tagPatternList, null), r.selection.countNumber]] == [
      [1, "tagged", ["0123456789ab"], 1], [2, "any", null, 20]
    ]
    error_message = "the deployed image is matched by the first lifecycle rule, so the keep-20 rule after it never expires it"
  }

  assert {
    condition     = length(aws_iam_service_linked_role.ecs) == 0
    error_message = "ECS's service-linked role only where asked for: an account that has it refuses a second"
  }

  assert {
    condition     = one(aws_ecs_cluster.this[0].setting).name == "containerInsights" && one(aws_ecs_cluster.this[0].setting).value == "enabled"
    error_message = "Container Insights is on (RunningTaskCount for the scaling metric)"
  }

  assert {
    condition     = aws_ecs_task_definition.this[0].ipc_mode == "host" && { for v in aws_ecs_task_definition.this[0].volume : v.name => v.host_path }["mps-pipes"] == "/run/pagefleet-mps"
    error_message = "the task shares the host's IPC namespace and MPS pipe directory"
  }

  assert {
    condition     = [for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : [c.name, c.essential]] == [["vllm", true], ["runner", true]]
    error_message = "two essential containers: the vLLM sidecar and the runner"
  }

  assert {
    condition = (
      { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.runner.resourceRequirements == [{ type = "GPU", value = "1" }] &&
      !contains(keys({ for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm), "resourceRequirements") &&
      { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.runner.stopTimeout == 40 &&
      alltrue([for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : contains([for m in c.mountPoints : m.containerPath if m.sourceVolume == "mps-pipes"], "/run/pagefleet-mps")])
    )
    error_message = "one GPU requirement per task, on the runner; the MPS pipes mounted in both containers; stopTimeout from the drain timeout"
  }

  assert {
    condition     = alltrue([for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.user == "1000"])
    error_message = "both containers run as uid 1000, the MPS daemon's: another uid would wait for a server of its own"
  }

  assert {
    condition = { for e in { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.environment : e.name => e.value } == merge(
      jsondecode(file("modules/runners/task_environment.json")).vllm_environment, { HOME = "/cache" }
    ) && jsondecode(file("modules/runners/task_environment.json")).vllm_environment.USER != ""
    error_message = "the sidecar's environment is task_environment.json's (USER, LOGNAME: uid 1000 has no passwd entry, and torch's getpass.getuser() needs a name) plus HOME, the environment tests/test_runner_task_env.py replays"
  }

  assert {
    condition = (
      { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.runner.dependsOn == [{ containerName = "vllm", condition = "HEALTHY" }] &&
      { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.runner.links == ["vllm"] &&
      aws_ecs_task_definition.this[0].network_mode == "bridge"
    )
    error_message = "the runner starts once the sidecar is healthy and reaches it by its link on the bridge network"
  }

  assert {
    condition = { for e in { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.runner.environment : e.name => e.value } == {
      PAGEFLEET_CONVERTER            = "marker"
      PAGEFLEET_WORKERS              = "3"
      PAGEFLEET_MARKER_INFERENCE_URL = "http://vllm:8000/v1"
      PAGEFLEET_MARKER_VLLM_GPU_TYPE = "l4"
      PAGEFLEET_STOP_TIMEOUT_S       = "40"
      PAGEFLEET_MPS_DIR              = "/run/pagefleet-mps"
    }
    error_message = "the runner settings plus the sidecar's URL, the GPU type of the smallest instance GPU (g6: L4), and the supervisor's stop timeout"
  }

  assert {
    condition = (
      tonumber({ for e in { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.runner.environment : e.name => e.value }.PAGEFLEET_STOP_TIMEOUT_S) ==
      { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.runner.stopTimeout
    )
    error_message = "PAGEFLEET_STOP_TIMEOUT_S is the container's stopTimeout"
  }

  assert {
    condition = (
      { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.image == "vllm/vllm-openai:v0.20.1" &&
      { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.command == [
        "--model", "datalab-to/surya-ocr-2", "--served-model-name", "datalab-to/surya-ocr-2",
        "--host", "0.0.0.0", "--port", "8000", "--no-enforce-eager", "--dtype", "bfloat16", "--max-model-len", "18000",
        "--max-num-seqs", "32", "--max-num-batched-tokens", "8192", "--gpu-memory-utilization", "0.65",
        "--enable-prefix-caching", "--mm-processor-kwargs", "{\"max_pixels\":6291456,\"min_pixels\":3136}",
        "--speculative-config", "{\"method\":\"mtp\",\"num_speculative_tokens\":2}",
      ]
    )
    error_message = "the sidecar serves surya's model with surya's own arguments, sized for a 24 GB GPU"
  }

  assert {
    condition = (
      { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.entryPoint[0] == "/bin/sh" &&
      strcontains({ for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.entryPoint[2], "export CUDA_MPS_PIPE_DIRECTORY=\"$pipe\"") &&
      strcontains({ for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.entryPoint[2], "pipe=\"/run/pagefleet-mps\"") &&
      strcontains({ for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.entryPoint[2], "if [ \"$count\" != 1 ]; then") &&
      strcontains({ for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.entryPoint[2], "exec vllm serve \"$@\"")
    )
    error_message = "the sidecar serves only with exactly one GPU visible and joins the instance's MPS daemon (<mps dir>) before serving"
  }

  assert {
    condition = (
      { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.healthCheck.command[0] == "CMD" &&
      strcontains(join(" ", { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.healthCheck.command), "http://127.0.0.1:8000/health") &&
      { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.healthCheck.startPeriod == 300 &&
      { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.startTimeout == 600
    )
    error_message = "the sidecar's health check asks vLLM's /health, with ECS's longest start period and 10 minutes in all for the model to load"
  }

  assert {
    condition = (
      { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.logConfiguration.options["awslogs-group"] == "/ecs/pf" &&
      { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.logConfiguration.options["awslogs-stream-prefix"] == "vllm" &&
      { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.runner.logConfiguration.options["awslogs-stream-prefix"] == "runner"
    )
    error_message = "the sidecar logs to the runner's log group under its own stream prefix"
  }

  assert {
    condition = (
      strcontains(base64decode(aws_launch_template.this[0].user_data), "--default-runtime=nvidia") &&
      strcontains(base64decode(aws_launch_template.this[0].user_data), "install -d -m 0755 -o 1000 -g 1000 '/var/lib/pagefleet/vllm-cache'") &&
      { for v in aws_ecs_task_definition.this[0].volume : v.name => v.host_path }["vllm-cache"] == "/var/lib/pagefleet/vllm-cache"
    )
    error_message = "the sidecar reaches the GPU through Docker's default runtime and keeps its caches on the instance"
  }

  assert {
    condition = (
      one(aws_ecs_capacity_provider.this[0].auto_scaling_group_provider).managed_termination_protection == "ENABLED" &&
      one(one(aws_ecs_capacity_provider.this[0].auto_scaling_group_provider).managed_scaling).status == "ENABLED" &&
      aws_autoscaling_group.this[0].protect_from_scale_in
    )
    error_message = "managed scaling and termination protection (which needs scale-in protected instances)"
  }

  assert {
    condition = (
      [for o in one(one(aws_autoscaling_group.this[0].mixed_instances_policy).launch_template).override : o.instance_type] == ["g6.xlarge", "g5.xlarge"] &&
      one(one(aws_autoscaling_group.this[0].mixed_instances_policy).instances_distribution).on_demand_base_capacity == 1 &&
      one(one(aws_autoscaling_group.this[0].mixed_instances_policy).instances_distribution).on_demand_percentage_above_base_capacity == 25 &&
      aws_autoscaling_group.this[0].max_size == 3 && aws_autoscaling_group.this[0].min_size == 0
    )
    error_message = "instance types and the on-demand/Spot mix come from the variables"
  }

  assert {
    condition = (
      strcontains(base64decode(aws_launch_template.this[0].user_data), "ECS_CLUSTER=pf") &&
      strcontains(base64decode(aws_launch_template.this[0].user_data), "ECS_ENABLE_GPU_SUPPORT=true") &&
      alltrue([for f in ["common.sh", "start_mps.sh", "stop_mps.sh", "check_mps.sh", "pagefleet-mps.service"] :
      strcontains(base64decode(aws_launch_template.this[0].user_data), filebase64("tests/fixtures/mps/${f}"))]) &&
      strcontains(base64decode(aws_launch_template.this[0].user_data), "Environment=PAGEFLEET_MPS_DIR=%s\\n' '/run/pagefleet-mps'") &&
      strcontains(base64decode(aws_launch_template.this[0].user_data), "systemctl enable --now pagefleet-mps.service")
    )
    error_message = "user data joins the cluster and starts the MPS daemon from mps/"
  }

  assert {
    condition     = aws_launch_template.this[0].image_id == "ami-0123456789abcdef0" && one(aws_launch_template.this[0].metadata_options).http_tokens == "required"
    error_message = "the AMI comes from the SSM parameter; IMDSv2 only"
  }

  assert {
    condition = jsonencode({ for s in jsondecode(aws_iam_role_policy.task[0].policy).Statement : s.Sid => [sort(s.Action), sort(s.Resource)] }) == jsonencode({
      ConsumeChunks          = [["sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage"], [var.chunks_queue_arn]]
      ReadChunksAndManifests = [["s3:GetObject"], ["arn:aws:s3:::pf-bucket/jobs/*/chunks/*", "arn:aws:s3:::pf-bucket/jobs/*/manifest.json"]]
      WriteChunkResults      = [["s3:PutObject"], ["arn:aws:s3:::pf-bucket/jobs/*/assets/*", "arn:aws:s3:::pf-bucket/jobs/*/results/*"]]
      SplitChunks            = [["s3:GetObject", "s3:PutObject"], ["arn:aws:s3:::pf-bucket/jobs/*/chunks/*", "arn:aws:s3:::pf-bucket/jobs/*/results/*"]]
      SendChunks             = [["sqs:SendMessage"], [var.chunks_queue_arn]]
      CountConversions       = [["s3:GetObject", "s3:PutObject"], ["arn:aws:s3:::pf-bucket/jobs/*/conversions/*"]]
      UseDataKey             = [["kms:Decrypt", "kms:GenerateDataKey"], [var.kms_key_arn]]
      ScaleInProtection      = [["ecs:GetTaskProtection", "ecs:UpdateTaskProtection"], ["arn:aws:ecs:us-east-1:123456789012:task/pf/*"]]
    })
    error_message = "runner task role: chunks queue, chunk PDFs in, results and assets out, split chunks' halves out, its conversion counts, its own task protection"
  }
}

run "the_ecs_service_linked_role_for_a_new_account" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    create_service_linked_role = true
  }

  assert {
    condition     = aws_iam_service_linked_role.ecs[0].aws_service_name == "ecs.amazonaws.com"
    error_message = "asked for, the runners create ECS's service-linked role (the capacity provider needs it)"
  }
}

run "gpu_type_from_the_instance_types" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    instance_types = ["g6e.xlarge"]
  }

  assert {
    condition = (
      contains({ for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.runner.environment, { name = "PAGEFLEET_MARKER_VLLM_GPU_TYPE", value = "l40s" }) &&
      strcontains(join(" ", { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.command), "--max-num-seqs 64 --max-num-batched-tokens 16384")
    )
    error_message = "a 48 GB L40S: surya's sizing doubles the sequences and batched tokens"
  }
}

run "gpu_type_given" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    instance_types              = ["p5.4xlarge"]
    vllm_gpu_type               = "h100"
    vllm_gpu_memory_utilization = 0.5
    vllm_extra_args             = ["--max-num-seqs", "96"]
  }

  assert {
    condition = (
      contains({ for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.runner.environment, { name = "PAGEFLEET_MARKER_VLLM_GPU_TYPE", value = "h100" }) &&
      endswith(join(" ", { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.command), "--max-num-seqs 96") &&
      strcontains(join(" ", { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.command), "--max-num-seqs 104 --max-num-batched-tokens 16384 --gpu-memory-utilization 0.5")
    )
    error_message = "an H100 as surya sizes it (104 sequences), the memory share and extra arguments from the variables"
  }
}

run "heartbeat_that_cannot_hold_the_lease_refused" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    environment = { PAGEFLEET_VISIBILITY_TIMEOUT_S = "30", PAGEFLEET_HEARTBEAT_S = "20" }
  }

  expect_failures = [var.environment]
}

run "unknown_instance_type_refused" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    instance_types = ["g6.xlarge", "x9z.large"]
  }

  expect_failures = [var.instance_types]
}

run "multi_gpu_instance_types_refused" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    instance_types = ["g6.xlarge", "p4d.24xlarge", "g5.12xlarge"]
  }

  expect_failures = [var.instance_types]
}

run "no_subnets_refused" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    subnet_ids = []
  }

  expect_failures = [var.subnet_ids]
}

run "no_vpc_refused" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    vpc_id = null
  }

  expect_failures = [var.vpc_id]
}

run "latest_tag_refused" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    image_tag = "latest"
  }

  expect_failures = [var.image_tag]
}

run "no_image_tag_no_task_definition" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    image_tag = null
  }

  expect_failures = [aws_ecs_task_definition.this]
}

run "repositories_immutable_and_deletable_only_on_request" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    force_delete = true
  }

  assert {
    condition = (
      aws_ecr_repository.this[0].image_tag_mutability == "IMMUTABLE" && aws_ecr_repository.vllm[0].image_tag_mutability == "IMMUTABLE" &&
      aws_ecr_repository.this[0].force_delete && aws_ecr_repository.vllm[0].force_delete && aws_ecr_repository.vllm[0].name == "pf-vllm"
    )
    error_message = "both repositories keep immutable tags; force_delete passes through for teardown"
  }

  assert {
    condition = (
      { for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.runner.image == "123456789012.dkr.ecr.us-east-1.amazonaws.com/pf:0123456789ab" &&
      contains([for s in jsondecode(aws_iam_role_policy.execution[0].policy).Statement : s.Sid], "PullImages") &&
      length([for s in jsondecode(aws_iam_role_policy.execution[0].policy).Statement : s if s.Sid == "PullImages"][0].Resource) == 2
    )
    error_message = "the runner image is the repository at the given tag; the execution role pulls from both repositories"
  }
}

run "repositories_kept_by_default" {
  command = plan

  module {
    source = "./modules/runners"
  }

  assert {
    condition     = !aws_ecr_repository.this[0].force_delete && !aws_ecr_repository.vllm[0].force_delete
    error_message = "a destroy keeps repositories that hold images unless force_delete is set"
  }
}

run "gpu_memory_utilization_leaves_room" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    vllm_gpu_memory_utilization = 0.9
  }

  expect_failures = [var.vllm_gpu_memory_utilization]
}

run "cuda_default_pipe_directory_refused" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    mps_pipe_directory = "/tmp/nvidia-mps/"
  }

  expect_failures = [var.mps_pipe_directory]
}

run "g4dn_refused_for_want_of_bfloat16" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    instance_types = ["g6.xlarge", "g4dn.xlarge"]
  }

  expect_failures = [var.instance_types]
}

run "t4_gpu_type_refused" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    vllm_gpu_type = "t4"
  }

  expect_failures = [var.vllm_gpu_type]
}

run "an_image_with_the_weights_runs_offline" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    vllm_image             = "123456789012.dkr.ecr.us-east-1.amazonaws.com/pf-vllm:v0.20.1-weights"
    vllm_image_has_weights = true
  }

  assert {
    condition     = contains({ for c in jsondecode(aws_ecs_task_definition.this[0].container_definitions) : c.name => c }.vllm.environment, { name = "HF_HUB_OFFLINE", value = "1" })
    error_message = "a sidecar image that holds the weights never reaches Hugging Face (HF_HUB_OFFLINE=1)"
  }
}
