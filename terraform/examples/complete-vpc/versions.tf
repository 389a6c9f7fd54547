terraform {
  # The pagefleet module's own floor (../../versions.tf).
  required_version = ">= 1.11.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.100, < 6.0"
    }
  }
}

# For the VPC below; the pagefleet module configures its own provider from `region` (and tags
# everything it makes with Project and Deployment).
provider "aws" {
  region = var.region

  default_tags {
    tags = { Project = "pagefleet", Deployment = var.name }
  }
}
