variable "name" {
  description = "Name of the deployment (the pagefleet module's `name`) and of the VPC."
  type        = string
  default     = "pagefleet-example"
}

variable "region" {
  description = "AWS region of the VPC and the pipeline."
  type        = string
  default     = "eu-west-1"
}

variable "vpc_cidr" {
  description = "CIDR block of the VPC: a /16 leaves room for two /24 public and two /20 private subnets."
  type        = string
  default     = "10.42.0.0/16"
}

variable "az_count" {
  description = "Availability Zones to spread the subnets over: each one more place to find Spot GPU capacity."
  type        = number
  default     = 2
}

variable "runner_image_tag" {
  description = "Tag of the runner image `make runner-image` pushed (the pagefleet module's `runner_image_tag`)."
  type        = string
  default     = null
}

variable "lambda_package_path" {
  description = "The Lambda zip from `make lambda-package`; null means the repository's build/lambda.zip."
  type        = string
  default     = null
}
