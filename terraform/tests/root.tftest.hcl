# The root configuration, planned against a mocked provider: the modules wired together from
# stack.json (pagefleet/stack.py).

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
  mock_resource "aws_ecr_repository" {
    defaults = { repository_url = "123456789012.dkr.ecr.us-east-1.amazonaws.com/pagefleet", arn = "arn:aws:ecr:us-east-1:123456789012:repository/pagefleet" }
  }
}

variables {
  lambda_package_path = "tests/fixtures/lambda.zip"
  create_runners      = false
}

run "pipeline_without_runners" {
  command = plan

  assert {
    condition     = output.bucket_name == "pagefleet-123456789012-us-east-1"
    error_message = "the default bucket name is <name>-<account>-<region>"
  }

  assert {
    condition     = output.kms_key_arn == "arn:aws:kms:us-east-1:123456789012:key/test"
    error_message = "without kms_key_arn the deployment's own key encrypts everything"
  }

  assert {
    condition     = output.submit_command == "aws s3 cp ./document.pdf s3://pagefleet-123456789012-us-east-1/inbox/document.pdf --region us-east-1"
    error_message = "the submit line targets inbox/ of the bucket"
  }

  assert {
    condition     = module.queues.queue_names == { ingest = "pagefleet-ingest", chunks = "pagefleet-chunks", completion = "pagefleet-completion" }
    error_message = "one queue per role of stack.json, named <name>-<role>"
  }

  assert {
    condition = jsonencode([for n in module.storage.bucket_notifications : [n.id, n.filter_prefix, n.filter_suffix, n.events]]) == jsonencode(
    [for n in jsondecode(file("stack.json")).notifications : [n.id, n.filter_prefix, n.filter_suffix, n.events]])
    error_message = "the bucket's notification rules are stack.json's, in order"
  }

  assert {
    condition     = length(module.storage.bucket_notifications) == 2 && length([for n in module.storage.bucket_notifications : n if n.filter_prefix == "inbox" && n.filter_suffix == null]) == 1
    error_message = "every key of the inbox is notified, .pdf in any letter case or not (each gets a record), and `inbox` itself"
  }

  assert {
    condition     = module.functions.lambda_function_names == { splitter = "pagefleet-splitter", completion = "pagefleet-completion", dead_letter = "pagefleet-dead-letter", upload_dead_letter = "pagefleet-upload-dead-letter", completion_dead_letter = "pagefleet-completion-dead-letter" }
    error_message = "five functions: one per source queue and one per DLQ"
  }

  assert {
    condition = (
      local.handler_env.PAGEFLEET_CONVERTER == "marker" &&
      local.handler_env.PAGEFLEET_FLEET_LANES == tostring(jsondecode(file("stack.json")).scaling.spread_tasks * 2) &&
      local.runner_env.PAGEFLEET_WORKERS_PER_GPU == "2" &&
      tonumber(local.handler_env.PAGEFLEET_COST_MARKER_PAGE_S) * local.settings.chunk_pages == jsondecode(file("stack.json")).scaling.seconds_per_chunk
    )
    error_message = "the splitter plans chunks for the runners: marker's costs, a chunk the scaling policy's seconds_per_chunk, a small document spread over spread_tasks x W lanes (not max_runners x W), W the 2 marker workers a g6.2xlarge runs and the runners are pinned to"
  }

  assert {
    condition     = output.ecr_repository_url == null && output.cluster_name == null
    error_message = "create_runners = false plans no runner"
  }

  assert {
    condition = (
      output.region == "us-east-1" && output.queue_prefix == "pagefleet" &&
      output.queue_names == { ingest = "pagefleet-ingest", chunks = "pagefleet-chunks", completion = "pagefleet-completion" } &&
      output.dead_letter_queue_names == { ingest = "pagefleet-ingest-dlq", chunks = "pagefleet-chunks-dlq", completion = "pagefleet-completion-dlq" } &&
      keys(output.queue_urls) == keys(output.dead_letter_queue_urls) && keys(output.dead_letter_queue_arns) == ["chunks", "completion", "ingest"]
    )
    error_message = "terraform output -json holds what the pagefleet command needs: bucket, region, queue prefix, names, URLs and DLQ ARNs"
  }

  assert {
    condition = (
      length(module.alarms.dead_letter_alarm_arns) == 3 && length(module.alarms.lambda_error_alarm_arns) == 5 &&
      length(module.alarms.lambda_throttle_alarm_arns) == 5 && module.alarms.task_start_failure_alarm_arn == null &&
      output.alarm_topic_arn == null
    )
    error_message = "without runners: DLQ, Lambda and chunk-age alarms, no ECS alarm, no topic unless asked"
  }

  # The functions' side (PAGEFLEET_EVENT_BUS, events:PutEvents on this bus) is functions.tftest.hcl's;
  # the moto apply reads the wiring back (tests/test_terraform_apply.py).
  assert {
    condition     = output.job_event_bus_name == "pagefleet-jobs" && output.job_event_bus_arn == "arn:aws:events:us-east-1:123456789012:event-bus/pagefleet-jobs"
    error_message = "the deployment's job event bus, <name>-jobs, is an output for subscribers"
  }
}

run "an_ami_release_other_than_a_gpu_one_refused" {
  command = plan

  variables {
    gpu_ami_release = "al2023-ami-ecs-hvm-2023.0.20260922-kernel-6.1-x86_64"
  }

  expect_failures = [var.gpu_ami_release]
}

run "a_webhook_plans" {
  command = plan

  variables {
    job_webhook_url = "https://hooks.example.com/pagefleet?token=t"
  }
}

run "a_webhook_that_is_not_http_refused" {
  command = plan

  variables {
    job_webhook_url = "file:///etc/passwd"
  }

  expect_failures = [var.job_webhook_url]
}

run "everything_with_the_repository_mps_scripts" {
  command = plan

  # Known role ARNs, for the outputs that name them.
  override_resource {
    target          = module.functions.aws_iam_role.this
    override_during = plan
    values          = { arn = "arn:aws:iam::123456789012:role/function" }
  }

  override_resource {
    target          = module.runners.aws_iam_role.task
    override_during = plan
    values          = { arn = "arn:aws:iam::123456789012:role/task" }
  }

  override_resource {
    target          = module.runners.aws_iam_role.execution
    override_during = plan
    values          = { arn = "arn:aws:iam::123456789012:role/execution" }
  }

  override_resource {
    target          = module.runners.aws_iam_role.instance
    override_during = plan
    values          = { arn = "arn:aws:iam::123456789012:role/instance" }
  }

  variables {
    create_runners   = true
    vpc_id           = "vpc-0123456789abcdef0"
    subnet_ids       = ["subnet-0123456789abcdef0"]
    runner_image_tag = "0123456789ab"
  }

  assert {
    condition     = output.cluster_name == "pagefleet" && output.service_name == "pagefleet"
    error_message = "the runner fleet and its service are planned"
  }

  assert {
    condition = (
      module.runners.vllm_gpu_type == "l4" &&
      { for e in { for c in jsondecode(module.runners.container_definitions) : c.name => c }.runner.environment : e.name => e.value }.PAGEFLEET_MARKER_INFERENCE_URL == "http://vllm:8000/v1" &&
      { for e in { for c in jsondecode(module.runners.container_definitions) : c.name => c }.runner.environment : e.name => e.value }.PAGEFLEET_STOP_TIMEOUT_S == tostring({ for c in jsondecode(module.runners.container_definitions) : c.name => c }.runner.stopTimeout) &&
      { for c in jsondecode(module.runners.container_definitions) : c.name => c }.runner.stopTimeout == ceil(jsondecode(file("stack.json")).settings.drain_timeout_s) + 15 &&
      { for c in jsondecode(module.runners.container_definitions) : c.name => c }.vllm.image == "vllm/vllm-openai:v0.20.1"
    )
    error_message = "the runner task: the vLLM sidecar sized for the default group's smallest GPU (L4), its URL, the drain timeout plus 15 s as stopTimeout and PAGEFLEET_STOP_TIMEOUT_S"
  }

  assert {
    condition = alltrue([for kind in ["instance", "volume"] :
      module.runners.launch_tags[kind].Project == "pagefleet" && module.runners.launch_tags[kind].Deployment == "pagefleet"
    ])
    error_message = "the GPU instances and their volumes launch with the Project and Deployment tags (provider default tags reach neither)"
  }

  assert {
    condition     = output.ecs_event_log_group_name == "/aws/events/pagefleet/ecs"
    error_message = "with runners, tasks failing to start are recorded and alarmed on"
  }

  assert {
    condition     = module.runners.ami_ssm_parameter == "/aws/service/ecs/optimized-ami/amazon-linux-2023/gpu/al2023-ami-ecs-gpu-hvm-2023.0.20260922-kernel-6.1-x86_64-ebs/image_id"
    error_message = "the runners launch a pinned GPU AMI release by default, not the moving 'recommended' one: no apply replaces instances on its own"
  }

  assert {
    # 3 DLQs, 3 oldest-message ages, 5 functions' errors and throttles, tasks failing to start,
    # the stall stop; leaving zero and stopping when idle (the scaling widget). The ARNs are not
    # known at plan, their number is.
    condition = (
      length(module.dashboard.alarms_shown) == 3 + 3 + 5 + 5 + 1 + 1 + 2 &&
      length(module.autoscaling.stall_alarm_arns) == 1 && length(module.autoscaling.scaling_alarm_arns) == 2
    )
    error_message = "every alarm the modules make is on the dashboard"
  }

  assert {
    # Its widgets are dashboard.tftest.hcl's: here the group's name is not known at plan.
    condition     = output.dashboard_url == "https://us-east-1.console.aws.amazon.com/cloudwatch/home?region=us-east-1#dashboards/dashboard/pagefleet"
    error_message = "the deployment's dashboard is planned, its console address an output"
  }

  assert {
    condition     = output.preflight.gpu_ami_release == var.gpu_ami_release && output.preflight.max_runners == jsondecode(file("stack.json")).scaling.max_runners && output.preflight.subnet_ids == var.subnet_ids
    error_message = "the preflight output holds what `pagefleet preflight --stack` checks"
  }

  assert {
    condition = (
      output.lambda_role_arns == { for k in ["splitter", "completion", "dead_letter", "upload_dead_letter", "completion_dead_letter"] : k => "arn:aws:iam::123456789012:role/function" } &&
      [output.runner_task_role_arn, output.runner_execution_role_arn, output.runner_instance_role_arn] == ["arn:aws:iam::123456789012:role/task", "arn:aws:iam::123456789012:role/execution", "arn:aws:iam::123456789012:role/instance"]
    )
    error_message = "the role ARNs are outputs: each function's, the runner task, execution and instance roles"
  }

  assert {
    condition     = module.autoscaling.target_backlog_per_task == jsondecode(file("stack.json")).scaling.acceptable_latency_s / jsondecode(file("stack.json")).scaling.seconds_per_chunk && module.autoscaling.tracking_expression == jsondecode(file("stack.json")).scaling.tracking_expression
    error_message = "the root passes the scaling policy of stack.json (pagefleet/scaling.py) to the autoscaling module"
  }
}

run "the_lease_and_its_heartbeat_reach_the_runners" {
  command = plan

  variables {
    visibility_timeout_s = 30
    heartbeat_s          = 10
  }

  assert {
    condition = (
      local.runner_env.PAGEFLEET_VISIBILITY_TIMEOUT_S == "30" && local.runner_env.PAGEFLEET_HEARTBEAT_S == "10" &&
      local.queues.chunks.visibility_timeout_s == 30
    )
    error_message = "the runners get the lease the chunks queue has and the heartbeat that extends it"
  }
}

run "a_name_too_long_for_iam_in_its_region_refused" {
  command = plan

  variables {
    name   = "abcdefghijklmnopqrstuvwxyzabcde" # 31 characters: fits IAM in us-east-1, not here
    region = "ap-southeast-1"
  }

  expect_failures = [var.name]
}

run "a_heartbeat_over_half_the_lease_refused" {
  command = plan

  variables {
    heartbeat_s = 40 # stack.json's lease is 60 s
  }

  expect_failures = [var.visibility_timeout_s]
}

# What a user must set, refused at plan time with a message that says what to set (the messages
# themselves are checked by tests/test_terraform.py, which runs terraform plan).

run "runners_need_subnets" {
  command = plan

  variables {
    create_runners   = true
    vpc_id           = "vpc-0123456789abcdef0"
    subnet_ids       = []
    runner_image_tag = "0123456789ab"
  }

  expect_failures = [var.subnet_ids]
}

run "runners_need_a_vpc" {
  command = plan

  variables {
    create_runners   = true
    subnet_ids       = ["subnet-0123456789abcdef0"]
    runner_image_tag = "0123456789ab"
  }

  expect_failures = [var.vpc_id]
}

run "no_runners_need_no_network" {
  command = plan

  variables {
    create_runners = false
    vpc_id         = null
    subnet_ids     = []
  }

  assert {
    condition     = output.cluster_name == null
    error_message = "without runners no VPC or subnet is asked for"
  }
}

run "max_runners_not_a_whole_number_refused" {
  command = plan

  variables {
    max_runners = 2.5
  }

  expect_failures = [var.max_runners]
}

run "multi_gpu_instance_types_refused" {
  command = plan

  variables {
    gpu_instance_types = ["g6.xlarge", "p5.48xlarge"]
  }

  expect_failures = [var.gpu_instance_types]
}

run "workers_sized_on_the_smallest_instance_type" {
  command = plan

  variables {
    gpu_instance_types = ["g6.4xlarge", "g5.2xlarge"]
  }

  assert {
    condition     = local.runner_env.PAGEFLEET_WORKERS_PER_GPU == "2" && local.handler_env.PAGEFLEET_FLEET_LANES == tostring(jsondecode(file("stack.json")).scaling.spread_tasks * 2)
    error_message = "a group that may launch a g5.2xlarge runs the 2 workers its 4 cores feed on every instance, and the lanes count 2"
  }
}

run "workers_sized_on_a_4xlarge" {
  command = plan

  variables {
    gpu_instance_types = ["g6.4xlarge"]
  }

  assert {
    condition     = local.runner_env.PAGEFLEET_WORKERS_PER_GPU == "6" && local.handler_env.PAGEFLEET_FLEET_LANES == tostring(jsondecode(file("stack.json")).scaling.spread_tasks * 6)
    error_message = "a g6.4xlarge's 8 cores less the model servers' 2 run 6 workers"
  }
}

run "workers_per_gpu_set_wins" {
  command = plan

  variables {
    workers_per_gpu = 3
  }

  assert {
    condition     = local.runner_env.PAGEFLEET_WORKERS_PER_GPU == "3" && local.handler_env.PAGEFLEET_FLEET_LANES == tostring(jsondecode(file("stack.json")).scaling.spread_tasks * 3)
    error_message = "an explicit workers_per_gpu reaches the runners and the lanes"
  }
}

run "workers_per_gpu_not_a_whole_number_refused" {
  command = plan

  variables {
    workers_per_gpu = 1.5
  }

  expect_failures = [var.workers_per_gpu]
}

run "unknown_instance_types_refused" {
  command = plan

  variables {
    gpu_instance_types = ["m7i.xlarge"]
  }

  expect_failures = [var.gpu_instance_types]
}

run "latest_tag_refused" {
  command = plan

  variables {
    runner_image_tag = "latest"
  }

  expect_failures = [var.runner_image_tag]
}

run "reserved_name_prefix_refused" {
  command = plan

  variables {
    name = "ecs-pages"
  }

  expect_failures = [var.name]
}

run "reserved_bucket_suffix_refused" {
  command = plan

  variables {
    bucket_name = "pages-s3alias"
  }

  expect_failures = [var.bucket_name]
}

run "a_lease_shorter_than_two_heartbeats_refused" {
  command = plan

  variables {
    visibility_timeout_s = 30
  }

  expect_failures = [var.visibility_timeout_s]
}

run "a_lease_of_two_heartbeats_plans" {
  command = plan

  variables {
    visibility_timeout_s = 40
  }
}

run "alarm_emails_make_a_topic_and_hear_the_cost_anomalies" {
  command = plan

  variables {
    alarm_emails               = ["ops@example.com"]
    cost_anomaly_threshold_usd = 50
    cost_anomaly_monitor_arn   = "arn:aws:ce::123456789012:anomalymonitor/0a1b2c3d-default"
  }

  assert {
    condition     = output.alarm_topic_arn == "arn:aws:sns:us-east-1:123456789012:pagefleet-alarms"
    error_message = "an alarm address creates the alarm topic"
  }

  assert {
    # Planned at all: the dashboard module refuses a threshold that mails no one.
    condition     = output.cost_anomaly_monitor_arn == var.cost_anomaly_monitor_arn
    error_message = "the daily anomaly summary reads the monitor brought, mailed to alarm_emails when neither cost_anomaly_emails nor budget_emails is set"
  }
}

run "an_existing_kms_key_everywhere" {
  command = plan

  variables {
    kms_key_arn = "arn:aws:kms:us-east-1:123456789012:key/theirs"
  }

  assert {
    condition     = output.kms_key_arn == var.kms_key_arn && module.storage.kms_key_arn == var.kms_key_arn
    error_message = "with kms_key_arn the bucket, queues, functions, logs and topic are handed that key"
  }
}

run "a_kms_alias_refused" {
  command = plan

  variables {
    kms_key_arn = "arn:aws:kms:us-east-1:123456789012:alias/theirs"
  }

  expect_failures = [var.kms_key_arn]
}
