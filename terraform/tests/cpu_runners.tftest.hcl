# runner_kind = "cpu": the text-layer converter on Fargate, for an account without GPU quota.
# The runners module alone, then the root with the kind switched (and left at gpu).

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
  mock_data "aws_iam_policy_document" {
    defaults = { json = "{}" }
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
  mock_resource "aws_security_group" {
    defaults = { id = "sg-0123456789abcdef0" }
  }
  mock_resource "aws_sqs_queue" {
    defaults = { arn = "arn:aws:sqs:us-east-1:123456789012:pagefleet-queue" }
  }
  mock_resource "aws_kms_key" {
    defaults = { arn = "arn:aws:kms:us-east-1:123456789012:key/test" }
  }
  mock_resource "aws_cloudwatch_event_bus" {
    defaults = { arn = "arn:aws:events:us-east-1:123456789012:event-bus/pagefleet-jobs" }
  }
  mock_resource "aws_sns_topic" {
    defaults = { arn = "arn:aws:sns:us-east-1:123456789012:pagefleet-alarms" }
  }
}

# The same made-up values, made at apply (the switching runs below apply twice over one state).
mock_provider "aws" {
  alias = "applied"

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
  mock_resource "aws_cloudwatch_log_group" {
    defaults = { arn = "arn:aws:logs:us-east-1:123456789012:log-group:/ecs/pf" }
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

run "a_cpu_runner_is_one_fargate_container_without_gpu" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    kind             = "cpu"
    name             = "pf"
    vpc_id           = "vpc-123"
    subnet_ids       = ["subnet-1", "subnet-2"]
    stop_timeout_s   = 40
    bucket_arn       = "arn:aws:s3:::pf-bucket"
    chunks_queue_arn = "arn:aws:sqs:us-east-1:123456789012:pf-chunks"
    kms_key_arn      = "arn:aws:kms:us-east-1:123456789012:key/test"
    image_tag        = "0123456789ab"
    environment = {
      PAGEFLEET_CONVERTER = "marker"
      PAGEFLEET_WORKERS   = "3"
      PAGEFLEET_MPS       = "on"
      PAGEFLEET_MPS_DIR   = "/run/pagefleet-mps"
      PAGEFLEET_BUCKET    = "pf-bucket"
    }
  }

  assert {
    condition = (
      length(aws_launch_template.this) + length(aws_autoscaling_group.this) + length(aws_ecs_capacity_provider.this) +
      length(aws_ecs_cluster_capacity_providers.this) + length(aws_iam_role.instance) + length(aws_iam_instance_profile.this) +
      length(data.aws_ssm_parameter.ami) + length(aws_ecs_task_definition.this) == 0
    )
    error_message = "no GPU instances: no AMI, launch template, auto scaling group, capacity provider, instance role or GPU task definition"
  }

  assert {
    condition = (
      aws_ecs_task_definition.cpu[0].requires_compatibilities == toset(["FARGATE"]) && aws_ecs_task_definition.cpu[0].network_mode == "awsvpc" &&
      aws_ecs_task_definition.cpu[0].cpu == "2048" && aws_ecs_task_definition.cpu[0].memory == "4096" &&
      aws_ecs_task_definition.cpu[0].ipc_mode == null && length(aws_ecs_task_definition.cpu[0].volume) == 0 &&
      one(aws_ecs_task_definition.cpu[0].ephemeral_storage).size_in_gib == 50 &&
      one(aws_ecs_task_definition.cpu[0].runtime_platform).cpu_architecture == "X86_64"
    )
    error_message = "a Fargate task of cpu_task.json's size (2 vCPU, 4 GiB, room for the image), no host IPC or MPS volume"
  }

  assert {
    condition = (
      [for c in jsondecode(aws_ecs_task_definition.cpu[0].container_definitions) : c.name] == ["runner"] &&
      alltrue([for c in jsondecode(aws_ecs_task_definition.cpu[0].container_definitions) : !contains(keys(c), "resourceRequirements") && !contains(keys(c), "dependsOn") && !contains(keys(c), "links") && !contains(keys(c), "mountPoints")]) &&
      one(jsondecode(aws_ecs_task_definition.cpu[0].container_definitions)).image == "123456789012.dkr.ecr.us-east-1.amazonaws.com/pf:0123456789ab" &&
      one(jsondecode(aws_ecs_task_definition.cpu[0].container_definitions)).stopTimeout == 40
    )
    error_message = "one container, the runner image, with no GPU requirement, no sidecar to wait for and no MPS pipes"
  }

  assert {
    condition = { for e in one(jsondecode(aws_ecs_task_definition.cpu[0].container_definitions)).environment : e.name => e.value } == {
      PAGEFLEET_BUCKET            = "pf-bucket"
      PAGEFLEET_CONVERTER         = "text-layer"
      PAGEFLEET_WORKERS           = "2"
      PAGEFLEET_CONVERT_MEMORY_MB = "1536"
      PAGEFLEET_STOP_TIMEOUT_S    = "40"
      PAGEFLEET_MPS               = "off"
    }
    error_message = "the text-layer converter, W = 2 workers of 1536 MB each, MPS off: the root's settings less its GPU ones"
  }

  assert {
    condition = (
      aws_ecs_service.this[0].launch_type == "FARGATE" && aws_ecs_service.this[0].platform_version == "LATEST" &&
      length(aws_ecs_service.this[0].capacity_provider_strategy) == 0 &&
      one(aws_ecs_service.this[0].network_configuration).subnets == toset(["subnet-1", "subnet-2"]) &&
      one(aws_ecs_service.this[0].network_configuration).security_groups == toset(["sg-0123456789abcdef0"]) &&
      one(aws_ecs_service.this[0].network_configuration).assign_public_ip == false
    )
    error_message = "the service runs its tasks on Fargate in the runner subnets, behind the runners' security group, with no public address"
  }

  assert {
    condition     = [for s in jsondecode(aws_iam_role_policy.execution[0].policy).Statement : s.Resource if s.Sid == "PullImages"] == [["arn:aws:ecr:us-east-1:123456789012:repository/pf"]]
    error_message = "the execution role pulls the runner image only: there is no sidecar image"
  }

  assert {
    condition     = length(aws_ecr_repository.vllm) == 1
    error_message = "the vLLM mirror's repository stays with kind cpu: switching kinds deletes no repository that holds images, and the mirror can be made before the GPU quota arrives"
  }

  assert {
    condition     = jsondecode(aws_iam_role_policy.task[0].policy) == jsondecode(file("policies.json")).roles.runner.policy
    error_message = "the CPU runner's task role is the GPU runner's (terraform/policies.json): the same queue, objects and scale-in protection"
  }

  assert {
    condition     = output.launch_tags == {} && output.autoscaling_group_name == null && output.kind == "cpu"
    error_message = "nothing is launched outside the service"
  }
}

run "the_root_switches_to_cpu_runners_with_one_variable" {
  command = plan

  variables {
    lambda_package_path = "tests/fixtures/lambda.zip"
    runner_kind         = "cpu"
    vpc_id              = "vpc-0123456789abcdef0"
    subnet_ids          = ["subnet-0123456789abcdef0"]
    runner_image_tag    = "0123456789ab"
  }

  assert {
    condition     = module.runners.kind == "cpu" && module.runners.autoscaling_group_name == null && module.runners.launch_tags == {}
    error_message = "runner_kind reaches the runners module: no GPU instances"
  }

  assert {
    condition = (
      { for e in one(jsondecode(module.runners.container_definitions)).environment : e.name => e.value }.PAGEFLEET_CONVERTER == "text-layer" &&
      { for e in one(jsondecode(module.runners.container_definitions)).environment : e.name => e.value }.PAGEFLEET_WORKERS == "2" &&
      !contains(keys({ for e in one(jsondecode(module.runners.container_definitions)).environment : e.name => e.value }), "PAGEFLEET_MPS_DIR")
    )
    error_message = "the task runs the text-layer converter with cpu_task.json's two workers and no MPS directory"
  }

  assert {
    condition = (
      local.handler_env.PAGEFLEET_CONVERTER == "text-layer" &&
      local.handler_env.PAGEFLEET_CHUNK_MIN_COST_S == "8" &&
      local.handler_env.PAGEFLEET_FLEET_LANES == tostring(jsondecode(file("stack.json")).scaling.spread_tasks * 2) &&
      !contains(keys(local.handler_env), "PAGEFLEET_COST_MARKER_PAGE_S")
    )
    error_message = "the splitter prices pages as the text-layer converter does, and a chunk costs one worker at least chunk_cpu_s (8 s): seconds_per_chunk (4 s) of a two-worker task"
  }

  assert {
    condition = (
      module.autoscaling.scaling_target == { resource_id = "service/pagefleet/pagefleet", queue_name = "pagefleet-chunks" } &&
      module.autoscaling.target_backlog_per_task == jsondecode(file("stack.json")).scaling.acceptable_latency_s / 4 &&
      module.autoscaling.tracking_expression == jsondecode(file("stack.json")).scaling.tracking_expression &&
      module.autoscaling.from_zero_expression == jsondecode(file("stack.json")).scaling.from_zero_expression
    )
    error_message = "the same policy scales the Fargate service on the chunks queue's backlog, a chunk being 4 s of a CPU task"
  }

  assert {
    condition     = output.preflight.runner_kind == "cpu" && output.runner_instance_role_arn == null
    error_message = "preflight is told the kind (a Fargate vCPU quota, no GPU one); there is no instance role"
  }
}

run "the_dashboard_of_cpu_runners_has_no_instance_group" {
  command = plan

  module {
    source = "./modules/dashboard"
  }

  variables {
    name                   = "pf"
    region                 = "us-east-1"
    queue_names            = { ingest = "pf-ingest", chunks = "pf-chunks", completion = "pf-completion" }
    function_names         = { splitter = "pf-splitter" }
    cluster_name           = "pf"
    service_name           = "pf"
    autoscaling_group_name = null
  }

  assert {
    condition     = !contains([for w in jsondecode(output.dashboard_body).widgets : w.properties.title], "GPU instances") && contains([for w in jsondecode(output.dashboard_body).widgets : w.properties.title], "Runner tasks")
    error_message = "Fargate runners: their tasks on the dashboard, and no instance group widget, whose metric would name a null group"
  }
}

run "gpu_stays_the_default" {
  command = plan

  variables {
    lambda_package_path = "tests/fixtures/lambda.zip"
    vpc_id              = "vpc-0123456789abcdef0"
    subnet_ids          = ["subnet-0123456789abcdef0"]
    runner_image_tag    = "0123456789ab"
  }

  assert {
    condition = (
      module.runners.kind == "gpu" &&
      [for c in jsondecode(module.runners.container_definitions) : c.name] == ["vllm", "runner"] &&
      { for c in jsondecode(module.runners.container_definitions) : c.name => c }.runner.resourceRequirements == [{ type = "GPU", value = "1" }] &&
      toset(keys(module.runners.launch_tags)) == toset(["instance", "volume"])
    )
    error_message = "without runner_kind the runners are today's: GPU instances, the vLLM sidecar and a GPU per task"
  }

  assert {
    condition = (
      local.handler_env.PAGEFLEET_CONVERTER == "marker" && !contains(keys(local.handler_env), "PAGEFLEET_CHUNK_MIN_COST_S") &&
      module.autoscaling.target_backlog_per_task == jsondecode(file("stack.json")).scaling.acceptable_latency_s / jsondecode(file("stack.json")).scaling.seconds_per_chunk &&
      module.autoscaling.scaling_target.queue_name == "pagefleet-chunks"
    )
    error_message = "the GPU fleet's splitter and scaling are stack.json's"
  }
}

run "an_unknown_runner_kind_refused" {
  command = plan

  variables {
    lambda_package_path = "tests/fixtures/lambda.zip"
    create_runners      = false
    runner_kind         = "arm"
  }

  expect_failures = [var.runner_kind]
}

run "a_stop_timeout_past_fargates_120_s_refused" {
  command = plan

  module {
    source = "./modules/runners"
  }

  variables {
    kind             = "cpu"
    name             = "pf"
    vpc_id           = "vpc-123"
    subnet_ids       = ["subnet-1"]
    stop_timeout_s   = 130
    bucket_arn       = "arn:aws:s3:::pf-bucket"
    chunks_queue_arn = "arn:aws:sqs:us-east-1:123456789012:pf-chunks"
    kms_key_arn      = "arn:aws:kms:us-east-1:123456789012:key/test"
    image_tag        = "0123456789ab"
  }

  expect_failures = [aws_ecs_task_definition.cpu]
}

# Switching kinds, applied against the mocked provider (whose ids are made up at each create):
# gpu -> cpu -> gpu. The provider keeps a launch type the configuration stops setting, so
# without its replacement the service would stay on Fargate after the switch back.
run "switch_applied_gpu" {
  command   = apply
  providers = { aws = aws.applied }

  module {
    source = "./modules/runners"
  }

  variables {
    kind             = "gpu"
    name             = "pf"
    vpc_id           = "vpc-123"
    subnet_ids       = ["subnet-1"]
    mps_dir          = "tests/fixtures/mps"
    bucket_arn       = "arn:aws:s3:::pf-bucket"
    chunks_queue_arn = "arn:aws:sqs:us-east-1:123456789012:pf-chunks"
    kms_key_arn      = "arn:aws:kms:us-east-1:123456789012:key/test"
    image_tag        = "0123456789ab"
  }
}

run "switch_applied_cpu" {
  command   = apply
  providers = { aws = aws.applied }

  module {
    source = "./modules/runners"
  }

  variables {
    kind             = "cpu"
    name             = "pf"
    vpc_id           = "vpc-123"
    subnet_ids       = ["subnet-1"]
    mps_dir          = "tests/fixtures/mps"
    bucket_arn       = "arn:aws:s3:::pf-bucket"
    chunks_queue_arn = "arn:aws:sqs:us-east-1:123456789012:pf-chunks"
    kms_key_arn      = "arn:aws:kms:us-east-1:123456789012:key/test"
    image_tag        = "0123456789ab"
  }

  assert {
    condition     = output.service_arn != run.switch_applied_gpu.service_arn && aws_ecs_service.this[0].launch_type == "FARGATE"
    error_message = "gpu -> cpu: a new service, on Fargate"
  }
}

run "switch_applied_back_to_gpu" {
  command   = apply
  providers = { aws = aws.applied }

  module {
    source = "./modules/runners"
  }

  variables {
    kind             = "gpu"
    name             = "pf"
    vpc_id           = "vpc-123"
    subnet_ids       = ["subnet-1"]
    mps_dir          = "tests/fixtures/mps"
    bucket_arn       = "arn:aws:s3:::pf-bucket"
    chunks_queue_arn = "arn:aws:sqs:us-east-1:123456789012:pf-chunks"
    kms_key_arn      = "arn:aws:kms:us-east-1:123456789012:key/test"
    image_tag        = "0123456789ab"
  }

  assert {
    condition     = output.service_arn != run.switch_applied_cpu.service_arn && length(aws_ecs_service.this[0].capacity_provider_strategy) == 1
    error_message = "cpu -> gpu: a new service on the capacity provider, not the Fargate one updated in place (whose launch type the provider would keep)"
  }
}
