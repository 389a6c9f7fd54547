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
  mps_pipe_directory                       = "/tmp/nvidia-mps"
  bucket_arn                               = "arn:aws:s3:::pf-bucket"
  chunks_queue_arn                         = "arn:aws:sqs:us-east-1:123456789012:pf-chunks"
  kms_key_arn                              = "arn:aws:kms:us-east-1:123456789012:key/test"
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

  assert {
    condition     = one(aws_ecs_cluster.this[0].setting).name == "containerInsights" && one(aws_ecs_cluster.this[0].setting).value == "enabled"
    error_message = "Container Insights is on (RunningTaskCount for the scaling metric)"
  }

  assert {
    condition     = aws_ecs_task_definition.this[0].ipc_mode == "host" && one(aws_ecs_task_definition.this[0].volume).host_path == "/tmp/nvidia-mps"
    error_message = "the task shares the host's IPC namespace and MPS pipe directory"
  }

  assert {
    condition = (
      jsondecode(aws_ecs_task_definition.this[0].container_definitions)[0].resourceRequirements == [{ type = "GPU", value = "1" }] &&
      jsondecode(aws_ecs_task_definition.this[0].container_definitions)[0].stopTimeout == 40 &&
      jsondecode(aws_ecs_task_definition.this[0].container_definitions)[0].mountPoints[0].containerPath == "/tmp/nvidia-mps"
    )
    error_message = "one GPU per task, the MPS pipes mounted, stopTimeout from the drain timeout"
  }

  assert {
    condition = { for e in jsondecode(aws_ecs_task_definition.this[0].container_definitions)[0].environment : e.name => e.value } == {
      PAGEFLEET_CONVERTER = "marker"
      PAGEFLEET_WORKERS   = "3"
    }
    error_message = "the runner settings are the container's environment"
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
      strcontains(base64decode(aws_launch_template.this[0].user_data), "Environment=PAGEFLEET_MPS_DIR=%s\\n' '/tmp/nvidia-mps'") &&
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
      ConsumeChunks     = [["sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage"], [var.chunks_queue_arn]]
      ReadChunkPdfs     = [["s3:GetObject"], ["arn:aws:s3:::pf-bucket/jobs/*/chunks/*"]]
      WriteChunkResults = [["s3:PutObject"], ["arn:aws:s3:::pf-bucket/jobs/*/assets/*", "arn:aws:s3:::pf-bucket/jobs/*/results/*"]]
      UseDataKey        = [["kms:Decrypt", "kms:GenerateDataKey"], [var.kms_key_arn]]
      ScaleInProtection = [["ecs:GetTaskProtection", "ecs:UpdateTaskProtection"], ["arn:aws:ecs:us-east-1:123456789012:task/pf/*"]]
    })
    error_message = "runner task role: chunks queue, chunk PDFs in, results and assets out, its own task protection"
  }
}
