# The IAM path and permissions boundary: set on every role the functions and runners modules
# create, and nothing set without them.

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
    defaults = { arn = "arn:aws:ecr:us-east-1:123456789012:repository/pf" }
  }
  mock_resource "aws_cloudwatch_log_group" {
    defaults = { arn = "arn:aws:logs:us-east-1:123456789012:log-group:/ecs/pf" }
  }
}

variables {
  name        = "pf"
  name_prefix = "pf"
  kms_key_arn = "arn:aws:kms:us-east-1:123456789012:key/test"
  bucket_arn  = "arn:aws:s3:::pf-bucket"

  # functions
  package_path = "tests/fixtures/lambda.zip"
  bucket_name  = "pf-bucket"
  queue_prefix = "pf"
  queue_arns = {
    ingest     = "arn:aws:sqs:us-east-1:123456789012:pf-ingest"
    chunks     = "arn:aws:sqs:us-east-1:123456789012:pf-chunks"
    completion = "arn:aws:sqs:us-east-1:123456789012:pf-completion"
  }
  dead_letter_queue_arns = {
    ingest     = "arn:aws:sqs:us-east-1:123456789012:pf-ingest-dlq"
    chunks     = "arn:aws:sqs:us-east-1:123456789012:pf-chunks-dlq"
    completion = "arn:aws:sqs:us-east-1:123456789012:pf-completion-dlq"
  }

  # runners
  vpc_id             = "vpc-123"
  subnet_ids         = ["subnet-1"]
  instance_types     = ["g6.xlarge"]
  max_instances      = 2
  stop_timeout_s     = 40
  mps_dir            = "tests/fixtures/mps"
  mps_pipe_directory = "/run/pagefleet-mps"
  chunks_queue_arn   = "arn:aws:sqs:us-east-1:123456789012:pf-chunks"
  image_tag          = "0123456789ab"
  environment        = { PAGEFLEET_CONVERTER = "marker" }

  iam_role_path                 = "/pagefleet/"
  iam_role_permissions_boundary = "arn:aws:iam::123456789012:policy/pagefleet-boundary"
}

run "functions_roles_have_the_path_and_boundary" {
  command = plan

  module {
    source = "./modules/functions"
  }

  assert {
    condition     = length(aws_iam_role.this) == 5 && alltrue([for r in aws_iam_role.this : r.path == "/pagefleet/" && r.permissions_boundary == var.iam_role_permissions_boundary])
    error_message = "each function's role has the IAM path and the permissions boundary"
  }
}

run "runners_roles_have_the_path_and_boundary" {
  command = plan

  module {
    source = "./modules/runners"
  }

  assert {
    condition = alltrue([for r in [aws_iam_role.instance[0], aws_iam_role.execution[0], aws_iam_role.task[0]] :
    r.path == "/pagefleet/" && r.permissions_boundary == var.iam_role_permissions_boundary])
    error_message = "the instance, execution and task roles have the IAM path and the permissions boundary"
  }

  assert {
    condition     = aws_iam_instance_profile.this[0].path == "/pagefleet/"
    error_message = "the instance profile is on the roles' path"
  }
}

# The path falls to the provider's default "/", which a mocked plan does not apply.
run "without_them_no_boundary" {
  command = plan

  variables {
    iam_role_path                 = null
    iam_role_permissions_boundary = null
  }

  module {
    source = "./modules/functions"
  }

  assert {
    condition     = alltrue([for r in aws_iam_role.this : r.permissions_boundary == null])
    error_message = "by default the roles have no boundary, as before"
  }
}
