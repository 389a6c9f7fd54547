terraform {
  # 1.11: the S3 backend's use_lockfile (terraform/README.md) left its experiment in 1.11; 1.9
  # already brought validations that refer to other variables.
  required_version = ">= 1.11.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # The major tested here (terraform test, the moto apply); .terraform.lock.hcl holds the exact version.
      version = ">= 5.100, < 6.0"
    }
  }
}

provider "aws" {
  region = var.region

  # An AWS-compatible endpoint (the moto server of the tests); null means AWS itself.
  s3_use_path_style           = var.endpoint_url != null
  skip_metadata_api_check     = var.endpoint_url != null
  skip_credentials_validation = var.endpoint_url != null

  dynamic "endpoints" {
    for_each = var.endpoint_url == null ? [] : [var.endpoint_url]

    content {
      cloudwatch             = endpoints.value
      cloudwatchlogs         = endpoints.value
      ecr                    = endpoints.value
      ecs                    = endpoints.value
      ec2                    = endpoints.value
      events                 = endpoints.value
      autoscaling            = endpoints.value
      budgets                = endpoints.value
      ce                     = endpoints.value
      applicationautoscaling = endpoints.value
      iam                    = endpoints.value
      kms                    = endpoints.value
      lambda                 = endpoints.value
      s3                     = endpoints.value
      sns                    = endpoints.value
      sqs                    = endpoints.value
      ssm                    = endpoints.value
      sts                    = endpoints.value
    }
  }

  default_tags {
    tags = local.tags
  }
}
